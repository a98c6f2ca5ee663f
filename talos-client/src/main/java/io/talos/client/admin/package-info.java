/** Topic administration: {@link io.talos.client.admin.TalosAdmin} and the values it returns. */
package io.talos.client.admin;
