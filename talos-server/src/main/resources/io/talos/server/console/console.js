// Talos web console: reads the ops API (same origin) and refreshes every 2 s.
// Protected paths are signed in the browser exactly as the Talos SDK signs API requests
// (Galaxy-V3, HMAC-SHA1 over the canonical request; see io.talos.common.auth.GalaxySigner):
// the secret stays in this tab's sessionStorage and is never sent.
'use strict';

const EMPTY_MD5 = 'd41d8cd98f00b204e9800998ecf8427e'; // MD5 of the empty body: ops requests have none
const REFRESH_MS = 2000;
const state = { topic: null, group: null, timer: null };

function credential() {
  const keyId = sessionStorage.getItem('talos.keyId');
  const secret = sessionStorage.getItem('talos.secret');
  return keyId && secret ? { keyId, secret } : null;
}

// SHA-1 of bytes, for HMAC where WebCrypto is missing (browsers offer crypto.subtle only to
// https pages and localhost; the ops port usually speaks plain HTTP).
function sha1(bytes) {
  const ml = bytes.length, words = new Uint32Array(((ml + 8 >> 6) + 1) * 16);
  for (let i = 0; i < ml; i++) words[i >> 2] |= bytes[i] << (24 - (i % 4) * 8);
  words[ml >> 2] |= 0x80 << (24 - (ml % 4) * 8);
  words[words.length - 1] = ml * 8;
  let h0 = 0x67452301, h1 = 0xEFCDAB89, h2 = 0x98BADCFE, h3 = 0x10325476, h4 = 0xC3D2E1F0;
  const w = new Uint32Array(80);
  for (let b = 0; b < words.length; b += 16) {
    for (let i = 0; i < 16; i++) w[i] = words[b + i];
    for (let i = 16; i < 80; i++) { const x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]; w[i] = (x << 1) | (x >>> 31); }
    let a = h0, bb = h1, c = h2, d = h3, e = h4;
    for (let i = 0; i < 80; i++) {
      const f = i < 20 ? (bb & c) | (~bb & d) : i < 40 ? bb ^ c ^ d : i < 60 ? (bb & c) | (bb & d) | (c & d) : bb ^ c ^ d;
      const k = i < 20 ? 0x5A827999 : i < 40 ? 0x6ED9EBA1 : i < 60 ? 0x8F1BBCDC : 0xCA62C1D6;
      const t = (((a << 5) | (a >>> 27)) + f + e + k + w[i]) >>> 0;
      e = d; d = c; c = (bb << 30) | (bb >>> 2); bb = a; a = t;
    }
    h0 = (h0 + a) >>> 0; h1 = (h1 + bb) >>> 0; h2 = (h2 + c) >>> 0; h3 = (h3 + d) >>> 0; h4 = (h4 + e) >>> 0;
  }
  const out = new Uint8Array(20);
  [h0, h1, h2, h3, h4].forEach((h, i) => { for (let j = 0; j < 4; j++) out[i * 4 + j] = (h >>> (24 - j * 8)) & 0xff; });
  return out;
}

function hmacSha1(keyBytes, msgBytes) {
  let key = keyBytes.length > 64 ? sha1(keyBytes) : keyBytes;
  const k = new Uint8Array(64); k.set(key);
  const inner = new Uint8Array(64 + msgBytes.length), outer = new Uint8Array(64 + 20);
  for (let i = 0; i < 64; i++) { inner[i] = k[i] ^ 0x36; outer[i] = k[i] ^ 0x5c; }
  inner.set(msgBytes, 64);
  outer.set(sha1(inner), 64);
  return sha1(outer);
}

async function sign(secret, stringToSign) {
  const enc = new TextEncoder();
  let mac;
  if (window.crypto && crypto.subtle) {
    const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-1' }, false, ['sign']);
    mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, enc.encode(stringToSign)));
  } else {
    mac = hmacSha1(enc.encode(secret), enc.encode(stringToSign));
  }
  let bin = '';
  mac.forEach(b => { bin += String.fromCharCode(b); });
  return btoa(bin);
}

// GET path (already URI-encoded), signed when a credential is set. Resolves to {status, body}.
async function api(path) {
  const headers = {};
  const cred = credential();
  if (cred) {
    const ts = Math.floor(Date.now() / 1000).toString();
    // METHOD, content-md5, content-type, date (all empty), the x-xiaomi-* headers sorted, the path.
    const toSign = 'GET\n\n\n\n' + 'x-xiaomi-content-md5:' + EMPTY_MD5 + '\n' + 'x-xiaomi-timestamp:' + ts + '\n' + path;
    headers['X-Xiaomi-Timestamp'] = ts;
    headers['X-Xiaomi-Content-MD5'] = EMPTY_MD5;
    headers['Authorization'] = 'Galaxy-V3 ' + cred.keyId + ':' + await sign(cred.secret, toSign);
  }
  const res = await fetch(path, { headers, cache: 'no-store' });
  let body = null;
  try { body = await res.json(); } catch (e) { body = { error: 'not JSON (HTTP ' + res.status + ')' }; }
  return { status: res.status, body };
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function fill(tableId, rows, onClick, selected) {
  const tbody = document.querySelector('#' + tableId + ' tbody');
  tbody.replaceChildren();
  for (const r of rows) {
    const tr = el('tr');
    r.cells.forEach(c => tr.appendChild(el('td', c)));
    if (r.key !== undefined) tr.dataset.key = r.key;
    if (onClick) {
      tr.classList.add('link');
      if (r.key === selected) tr.classList.add('selected');
      tr.addEventListener('click', () => onClick(r.key));
    }
    tbody.appendChild(tr);
  }
}

function showError(text) {
  const m = document.getElementById('message');
  m.textContent = text || '';
  m.hidden = !text;
}

const rate = v => (v === undefined || v === null) ? '' : Number(v).toFixed(2);

async function refresh() {
  try {
    const ready = await api('/ops/ready');
    const badge = document.getElementById('ready');
    badge.textContent = ready.body.ready ? 'ready' : 'not ready: ' + (ready.body.reasons || []).map(r => r.check + ': ' + r.problem).join('; ');
    badge.className = 'badge ' + (ready.body.ready ? 'ok' : 'bad');
    const nodes = await api('/ops/nodes');
    fill('nodes', (nodes.body.nodes || []).map(n => ({ cells: [n.id + (n.local ? ' (this node)' : ''), n.apiUrl, n.state, n.capacity] })));
    if (credential()) await refreshProtected();
    document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
  } catch (e) {
    showError('cannot reach the server: ' + e);
  }
}

async function refreshProtected() {
  const topics = await api('/ops/topics');
  if (topics.status !== 200) {
    showError('topics: HTTP ' + topics.status + ': ' + topics.body.error);
    if (topics.status === 401 || topics.status === 403) signOut();
    return;
  }
  showError(null);
  fill('topics', topics.body.topics.map(t => ({ key: t.name,
    cells: [t.name, t.partitions, t.owner, rate(t.putMessagesPerSec), rate(t.putBytesPerSec), rate(t.getMessagesPerSec), rate(t.getBytesPerSec)] })),
    name => { state.topic = name; refresh(); }, state.topic);
  const groups = await api('/ops/groups');
  if (groups.status === 200) {
    fill('groups', groups.body.groups.map(g => ({ key: g.name, cells: [g.name, g.topics.join(', ')] })),
      name => { state.group = name; refresh(); }, state.group);
  }
  const ts = document.getElementById('topic-section');
  if (state.topic) {
    const t = await api('/ops/topics/' + encodeURIComponent(state.topic));
    ts.hidden = t.status !== 200;
    if (t.status === 200) {
      document.getElementById('topic-name').textContent = t.body.name;
      fill('partitions', t.body.partitionList.map(p => ({ cells: [p.partition, p.owner || '—',
        p.error ? p.error : p.startOffset, p.error ? '' : p.endOffset, p.error ? '' : p.bytes,
        rate(p.putMessagesPerSec), rate(p.getMessagesPerSec)] })));
    }
  }
  const gs = document.getElementById('group-section');
  if (state.group) {
    const g = await api('/ops/groups/' + encodeURIComponent(state.group));
    gs.hidden = g.status !== 200;
    if (g.status === 200) {
      document.getElementById('group-name').textContent = g.body.name;
      document.getElementById('group-lag').textContent = g.body.lag;
      const rows = [];
      for (const t of g.body.topics) {
        for (const p of t.partitions) {
          rows.push({ cells: [t.topic, p.partition, p.worker || '—', p.committedOffset === null ? '—' : p.committedOffset,
            p.endOffset, p.lag] });
        }
      }
      fill('group-partitions', rows);
    }
  }
}

function signedIn() {
  const cred = credential();
  document.body.classList.toggle('signed-in', !!cred);
  document.getElementById('signin').hidden = !!cred;
  document.getElementById('who').hidden = !cred;
  document.getElementById('whoKey').textContent = cred ? 'signed in as ' + cred.keyId : '';
}

function signOut() {
  sessionStorage.removeItem('talos.keyId');
  sessionStorage.removeItem('talos.secret');
  signedIn();
}

function schedule() {
  clearInterval(state.timer);
  if (document.getElementById('live').checked) state.timer = setInterval(refresh, REFRESH_MS);
}

document.addEventListener('DOMContentLoaded', () => {
  document.getElementById('signin').addEventListener('submit', ev => {
    ev.preventDefault();
    sessionStorage.setItem('talos.keyId', document.getElementById('keyId').value.trim());
    sessionStorage.setItem('talos.secret', document.getElementById('secret').value);
    document.getElementById('secret').value = '';
    signedIn();
    refresh();
  });
  document.getElementById('signout').addEventListener('click', () => { signOut(); refresh(); });
  document.getElementById('live').addEventListener('change', schedule);
  signedIn();
  refresh();
  schedule();
});
