package dev.vgpu.daemon.process;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code SIGHUP} handling: {@code kubectl exec <pod> -- kill -HUP 1} asks for a rescan. The JDK offers no
 * supported API for signals other than shutdown; {@code sun.misc.Signal} (module {@code jdk.unsupported}, exported
 * to everyone) is the long-standing one. It is reached reflectively so the build's warnings-as-errors compile
 * accepts it; if it is missing (a runtime image without {@code jdk.unsupported}) SIGHUP is logged as unavailable, and
 * so is a SIGHUP the process inherited as ignored (the JVM keeps it ignored and never calls the handler).
 * Process-wide by nature; the last handler installed wins.
 */
public final class Signals {

    private static final Logger LOG = LoggerFactory.getLogger(Signals.class);

    private Signals() {
    }

    /** Runs {@code action} on the JVM's signal thread for every SIGHUP; must return quickly. */
    public static void onHangup(Runnable action) {
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            Constructor<?> signal = signalClass.getConstructor(String.class);
            Method handle = signalClass.getMethod("handle", signalClass, handlerClass);
            Object handler = Proxy.newProxyInstance(Signals.class.getClassLoader(), new Class<?>[] {handlerClass},
                    (proxy, method, args) -> {
                        if (method.getName().equals("handle")) {
                            try {
                                action.run();
                            } catch (RuntimeException e) {
                                LOG.warn("SIGHUP handler failed: {}", e.toString());
                            }
                            return null;
                        }
                        return switch (method.getName()) {
                            case "hashCode" -> System.identityHashCode(proxy);
                            case "equals" -> proxy == args[0];
                            default -> "SIGHUP handler";
                        };
                    });
            Object previous = handle.invoke(null, signal.newInstance("HUP"), handler);
            if (previous == handlerClass.getField("SIG_IGN").get(null)) {
                // The JVM leaves an ignored SIGHUP ignored (nohup, or a parent that ignores it): the handler above
                // is recorded but never called.
                LOG.warn("SIGHUP is ignored in this process (started under nohup, or by a parent that ignores it);"
                        + " rescans on demand are unavailable: start the daemon without ignoring SIGHUP");
            }
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            LOG.warn("SIGHUP cannot be handled in this runtime ({}); rescans on demand are unavailable", e.toString());
        }
    }
}
