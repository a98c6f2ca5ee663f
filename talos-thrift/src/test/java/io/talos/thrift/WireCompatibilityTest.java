package io.talos.thrift;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URL;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * Our IDL against the public Talos SDK 2.0.2's generated classes, by reflection over both sides'
 * Thrift metadata: every SDK struct, exception and service-method argument struct must exist here
 * with the same field ids, names, types and requiredness; every SDK enum constant with the same
 * number; every SDK service method by name. Ours may add what the wire allows to add: optional
 * fields, enum constants, methods, and the exception field of result structs.
 */
class WireCompatibilityTest {
  private static final String SDK_PACKAGE = "com.xiaomi.infra.galaxy.talos.thrift.";

  @Test
  void everySdkTypeHasAWireIdenticalCounterpart() throws Exception {
    List<String> problems = new ArrayList<>();
    int checked = 0;
    for (String sdkName : sdkThriftClasses()) {
      Class<?> sdk = Class.forName(sdkName);
      String simple = sdkName.substring(SDK_PACKAGE.length());
      if (simple.equals("CommonConstants")) continue;
      Class<?> ours;
      try {
        ours = Class.forName("io.talos.thrift." + simple.replace('.', '$'));
      } catch (ClassNotFoundException e) {
        if (simple.contains("$") && !isWireType(sdk)) continue; // generated helpers (schemes, _Fields)
        problems.add("missing " + simple);
        continue;
      }
      if (sdk.isEnum() && hasMethod(sdk, "getValue")) {
        compareEnums(simple, sdk, ours, problems);
        checked++;
      } else if (isWireType(sdk)) {
        compareStructs(simple, sdk, ours, simple.endsWith("_result"), problems);
        checked++;
      }
    }
    assertTrue(checked > 100, "checked only " + checked + " types");
    if (!problems.isEmpty()) fail(String.join("\n", problems));
  }

  @Test
  void everySdkServiceMethodExists() throws Exception {
    for (String service : List.of("TalosBaseService", "TopicService", "MessageService", "ConsumerService", "QuotaService")) {
      Class<?> sdk = Class.forName(SDK_PACKAGE + service + "$Iface");
      Class<?> ours = Class.forName("io.talos.thrift." + service + "$Iface");
      for (Method m : sdk.getMethods()) {
        Method match = null;
        for (Method o : ours.getMethods()) if (o.getName().equals(m.getName())) match = o;
        assertTrue(match != null, service + "." + m.getName() + " is missing");
        assertEquals(m.getParameterCount(), match.getParameterCount(), service + "." + m.getName() + " arity");
      }
    }
  }

  @Test
  void granteeTypesMatchGalaxyRpcPackage() throws Exception {
    List<String> problems = new ArrayList<>();
    compareStructs("Grantee", Class.forName("com.xiaomi.infra.galaxy.rpc.thrift.Grantee"), Grantee.class, false, problems);
    compareEnums("GrantType", Class.forName("com.xiaomi.infra.galaxy.rpc.thrift.GrantType"), GrantType.class, problems);
    if (!problems.isEmpty()) fail(String.join("\n", problems));
  }

  private static boolean isWireType(Class<?> c) {
    try {
      c.getField("metaDataMap");
      return true;
    } catch (NoSuchFieldException e) {
      return false;
    }
  }

  private static boolean hasMethod(Class<?> c, String name) {
    for (Method m : c.getMethods()) if (m.getName().equals(name)) return true;
    return false;
  }

  private static void compareEnums(String name, Class<?> sdk, Class<?> ours, List<String> problems) throws Exception {
    Map<String, Integer> ourValues = new TreeMap<>();
    for (Object o : ours.getEnumConstants()) ourValues.put(((Enum<?>) o).name(), (Integer) ours.getMethod("getValue").invoke(o));
    for (Object s : sdk.getEnumConstants()) {
      String constant = ((Enum<?>) s).name();
      int value = (Integer) sdk.getMethod("getValue").invoke(s);
      if (!Integer.valueOf(value).equals(ourValues.get(constant))) {
        problems.add(name + "." + constant + ": SDK " + value + ", ours " + ourValues.get(constant));
      }
    }
  }

  /** Field id → "name required? type" from a generated class's static metaDataMap. */
  private static Map<Short, String> fields(Class<?> c) throws Exception {
    Map<?, ?> meta = (Map<?, ?>) c.getField("metaDataMap").get(null);
    Map<Short, String> out = new TreeMap<>();
    for (Map.Entry<?, ?> e : meta.entrySet()) {
      short id = (Short) e.getKey().getClass().getMethod("getThriftFieldId").invoke(e.getKey());
      Object md = e.getValue();
      String fieldName = (String) md.getClass().getField("fieldName").get(md);
      byte requirement = (Byte) md.getClass().getField("requirementType").get(md);
      out.put(id, fieldName + " " + requirement + " " + describe(md.getClass().getField("valueMetaData").get(md)));
    }
    return out;
  }

  /** A type description independent of the Java package: thrift type byte, struct/enum simple names. */
  private static String describe(Object valueMeta) throws Exception {
    Class<?> k = valueMeta.getClass();
    byte type = (Byte) k.getField("type").get(valueMeta);
    String simple = k.getSimpleName();
    switch (simple) {
      case "StructMetaData": return "struct:" + ((Class<?>) k.getField("structClass").get(valueMeta)).getSimpleName();
      case "EnumMetaData": return "enum:" + ((Class<?>) k.getField("enumClass").get(valueMeta)).getSimpleName();
      case "ListMetaData": return "list<" + describe(k.getField("elemMetaData").get(valueMeta)) + ">";
      case "SetMetaData": return "set<" + describe(k.getField("elemMetaData").get(valueMeta)) + ">";
      case "MapMetaData": return "map<" + describe(k.getField("keyMetaData").get(valueMeta)) + ","
          + describe(k.getField("valueMetaData").get(valueMeta)) + ">";
      default:
        // An exception field in a result struct is described as a plain struct without a class.
        return "t" + type;
    }
  }

  private static void compareStructs(String name, Class<?> sdk, Class<?> ours, boolean resultStruct,
      List<String> problems) throws Exception {
    Map<Short, String> theirs = fields(sdk);
    Map<Short, String> mine = fields(ours);
    if (resultStruct) {
      // The SDK's older generator records a result's exception field as an anonymous struct;
      // on the wire both are struct (type 12).
      mine.replaceAll((id, f) -> f.replaceAll("struct:\\w+", "t12"));
      theirs.replaceAll((id, f) -> f.replaceAll("struct:\\w+", "t12"));
    }
    for (Map.Entry<Short, String> f : theirs.entrySet()) {
      String m = mine.get(f.getKey());
      if (!f.getValue().equals(m)) problems.add(name + " field " + f.getKey() + ": SDK [" + f.getValue() + "] ours [" + m + "]");
    }
    for (Map.Entry<Short, String> f : mine.entrySet()) {
      if (theirs.containsKey(f.getKey())) continue;
      boolean optional = f.getValue().split(" ")[1].equals("2");
      boolean addedException = resultStruct && f.getValue().startsWith("e ");
      if (!optional && !addedException) problems.add(name + " adds non-optional field " + f.getKey() + " [" + f.getValue() + "]");
    }
  }

  private static List<String> sdkThriftClasses() throws IOException, ClassNotFoundException {
    URL url = sdkJar();
    List<String> names = new ArrayList<>();
    try (JarFile jar = new JarFile(url.getPath())) {
      Enumeration<JarEntry> entries = jar.entries();
      while (entries.hasMoreElements()) {
        String n = entries.nextElement().getName();
        if (n.startsWith("com/xiaomi/infra/galaxy/talos/thrift/") && n.endsWith(".class")) {
          names.add(n.substring(0, n.length() - 6).replace('/', '.'));
        }
      }
    }
    names.sort(null);
    return names;
  }

  private static URL sdkJar() throws ClassNotFoundException {
    return Class.forName(SDK_PACKAGE + "MessageBlock").getProtectionDomain().getCodeSource().getLocation();
  }

}
