package dev.vgpu.daemon.cli;

import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * One subcommand of the program ({@code serve}, {@code discover}, ...): its option table and how it reads a parsed
 * command line into something to run. The program's list of these is the whole dispatch, so a new subcommand is one
 * more entry (a {@code configure} command, say) and no branch anywhere else.
 */
public interface Subcommand {

    /** What a command returns when it runs on in its own threads: the process must not exit. */
    int KEEP_RUNNING = Integer.MIN_VALUE;

    /** What the user types, its help and its options. */
    CliCommand table();

    /**
     * The command its arguments ask for, the options converted (a number, a path) and nothing checked against the
     * machine yet: that happens when it is called.
     *
     * @throws UsageError for a value that does not convert
     */
    Callable<Integer> prepare(CliArgs args, Console console);

    /** A subcommand of {@code table} whose command {@code prepare} makes. */
    static Subcommand of(CliCommand table, java.util.function.BiFunction<CliArgs, Console, Callable<Integer>> prepare) {
        return new Subcommand() {
            @Override
            public CliCommand table() {
                return table;
            }

            @Override
            public Callable<Integer> prepare(CliArgs args, Console console) {
                return prepare.apply(args, console);
            }
        };
    }

    /**
     * What a command talks to: the process environment as it saw it at start, and its standard output and error.
     *
     * @param env the environment variables (a copy)
     * @param out standard output
     * @param err standard error
     */
    record Console(Map<String, String> env, PrintWriter out, PrintWriter err) {
        /** Copies the environment. */
        public Console {
            env = Map.copyOf(env);
        }
    }
}
