package org.rdmaconnector.osgi.internal.shell;

import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.support.table.ShellTable;

/**
 * The rdma:* commands: each prints one Karaf {@link ShellTable}; {@code --no-format} prints its rows only, cells
 * separated by tabs, for scripts.
 */
abstract class TableCommand implements Action {
    @Option(name = "--no-format", description = "Rows only, without header and borders, cells separated by tabs")
    boolean noFormat;

    @Override
    public final Object execute() throws Exception {
        ShellTable table = table();
        if (table != null) {
            table.print(System.out, !noFormat);
        }
        return null;
    }

    /** The table to print, or null when there is none to show (after {@link #explain}). */
    abstract ShellTable table() throws Exception;

    /** Says why there is no table: on standard output, or with {@code --no-format} on standard error. */
    void explain(String why) {
        (noFormat ? System.err : System.out).println(why);
    }
}
