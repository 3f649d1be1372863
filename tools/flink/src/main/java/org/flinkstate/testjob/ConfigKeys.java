package org.flinkstate.testjob;

import java.io.File;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.FallbackKey;

/**
 * Lists what a Flink distribution knows, for the test bed's check that the
 * keys and classes the provider writes are real: every {@link ConfigOption}
 * declared as a static field of a class in the given jars (its key and its
 * fallback and deprecated keys), the fs.s3a.* keys Hadoop's S3A declares
 * (string constants of org.apache.hadoop.fs.s3a.Constants in the S3 plugin),
 * and whether each class named after --classes loads from the plugin jar.
 *
 * <p>Usage: ConfigKeys --plugin PLUGIN.jar --classes a,b JAR...; prints one
 * line per fact: "option KEY", "hadoop KEY", "class NAME true|false".
 */
public final class ConfigKeys {
    public static void main(String[] args) throws Exception {
        String plugin = null;
        String[] classes = new String[0];
        List<String> jars = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--plugin":
                    plugin = args[++i];
                    break;
                case "--classes":
                    classes = args[++i].split(",");
                    break;
                default:
                    jars.add(args[i]);
            }
        }
        TreeSet<String> out = new TreeSet<>();
        ClassLoader own = ConfigKeys.class.getClassLoader();
        for (String jar : jars) {
            for (String name : classNames(jar)) {
                Class<?> c;
                try {
                    c = Class.forName(name, false, own);
                } catch (Throwable e) {
                    continue; // optional dependencies not on this class path
                }
                Field[] fields;
                try {
                    fields = c.getDeclaredFields();
                } catch (Throwable e) {
                    continue;
                }
                for (Field f : fields) {
                    if (!Modifier.isStatic(f.getModifiers()) || !ConfigOption.class.isAssignableFrom(f.getType())) {
                        continue;
                    }
                    try {
                        f.setAccessible(true);
                        ConfigOption<?> o = (ConfigOption<?>) f.get(null);
                        if (o == null) {
                            continue;
                        }
                        out.add("option " + o.key());
                        for (FallbackKey k : o.fallbackKeys()) {
                            out.add("option " + k.getKey());
                        }
                    } catch (Throwable e) {
                        // not initialisable here
                    }
                }
            }
        }
        if (plugin != null) {
            try (URLClassLoader pl = new URLClassLoader(new URL[] {new File(plugin).toURI().toURL()}, null)) {
                Class<?> constants = Class.forName("org.apache.hadoop.fs.s3a.Constants", false, pl);
                for (Field f : constants.getDeclaredFields()) {
                    if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
                        f.setAccessible(true);
                        Object v = f.get(null);
                        if (v instanceof String && ((String) v).startsWith("fs.s3a.")) {
                            out.add("hadoop " + v);
                        }
                    }
                }
                for (String name : classes) {
                    boolean loads;
                    try {
                        Class.forName(name, false, pl);
                        loads = true;
                    } catch (Throwable e) {
                        loads = false;
                    }
                    out.add("class " + name + " " + loads);
                }
            }
        }
        out.forEach(System.out::println);
    }

    private static List<String> classNames(String jar) throws Exception {
        List<String> names = new ArrayList<>();
        try (JarFile jf = new JarFile(jar)) {
            Enumeration<JarEntry> e = jf.entries();
            while (e.hasMoreElements()) {
                String n = e.nextElement().getName();
                if (n.endsWith(".class") && !n.contains("$") && !n.startsWith("META-INF")) {
                    names.add(n.substring(0, n.length() - 6).replace('/', '.'));
                }
            }
        }
        return names;
    }
}
