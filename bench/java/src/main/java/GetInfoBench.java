import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * GetInfo round trips against one remvirtd, side by side in interleaved
 * rounds: remvirt-java (pure Java), libvirt-java (libvirt's binding, JNA over
 * libvirt.so.0) and, through bench/getinfo, libremvirt.  Unpinned: where the
 * scheduler puts the threads, as an application runs.
 *
 *   java -cp ... GetInfoBench --remvirt-sock PATH --getinfo BENCH/getinfo [--calls N] [--rounds N]
 *
 * Prints us per call for each round, the medians and the ratios
 * remvirt-java/libremvirt (the target: at most 1.5x) and
 * libvirt-java/remvirt-java.
 */
public final class GetInfoBench {
    private static final Pattern UNPINNED =
            Pattern.compile("^unpinned round \\d+/\\d+:.*remvirt-block ([0-9.]+) +remvirt ([0-9.]+) us/call");

    private GetInfoBench() {
    }

    interface Call {
        void run() throws Exception;
    }

    private static double usPerCall(Call c, int calls) throws Exception {
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++)
            c.run();
        return (System.nanoTime() - t0) / 1000.0 / calls;
    }

    /** libremvirt's unpinned figures (remvirt-block, remvirt) from one round of bench/getinfo. */
    private static double[] libremvirt(String getinfo, String sock, int calls) throws IOException, InterruptedException {
        // getinfo's calls are per domain, over 3 domains.
        Process p = new ProcessBuilder(getinfo, "--remvirt-sock", sock, "--calls", String.valueOf(Math.max(1, calls / 3)),
                "--rounds", "1").redirectErrorStream(true).start();
        double[] found = null;
        StringBuilder all = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream()))) {
            for (String line; (line = r.readLine()) != null;) {
                all.append(line).append('\n');
                Matcher m = UNPINNED.matcher(line);
                if (m.find())
                    found = new double[] { Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)) };
            }
        }
        if (p.waitFor() != 0 || found == null)
            throw new IOException("bench/getinfo failed:\n" + all);
        return found;
    }

    private static double median(List<Double> v) {
        double[] a = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
    }

    public static void main(String[] args) throws Exception {
        String sock = null, getinfo = null;
        int calls = 30000, rounds = 5;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
            case "--remvirt-sock": sock = args[++i]; break;
            case "--getinfo": getinfo = args[++i]; break;
            case "--calls": calls = Integer.parseInt(args[++i]); break;
            case "--rounds": rounds = Integer.parseInt(args[++i]); break;
            default: throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (sock == null || getinfo == null)
            throw new IllegalArgumentException("--remvirt-sock and --getinfo are required");
        String uri = "test+unix:///default?socket=" + sock;

        org.remvirt.client.Connection rc = org.remvirt.client.Connection.open(uri);
        org.remvirt.client.Domain rdom = rc.domainLookupByName("test");
        org.libvirt.Connect lc = new org.libvirt.Connect(uri, false);
        org.libvirt.Domain ldom = lc.domainLookupByName("test");
        Call javaCall = () -> {
            if (rdom.getInfo().state != 1)
                throw new IllegalStateException("test is not running");
        };
        Call jnaCall = () -> {
            if (ldom.getInfo().state != org.libvirt.DomainInfo.DomainState.VIR_DOMAIN_RUNNING)
                throw new IllegalStateException("test is not running");
        };
        // The JIT compiles the hot paths first.
        usPerCall(javaCall, 20000);
        usPerCall(jnaCall, 5000);

        List<Double> java = new ArrayList<>(), jna = new ArrayList<>(), block = new ArrayList<>(), c = new ArrayList<>();
        System.out.printf("GetInfo on domain 'test' of one remvirtd, unpinned, %d calls per way and round, %d interleaved rounds%n",
                calls, rounds);
        for (int r = 1; r <= rounds; r++) {
            double[] lr = libremvirt(getinfo, sock, calls);
            double j = usPerCall(javaCall, calls);
            double n = usPerCall(jnaCall, calls);
            block.add(lr[0]);
            c.add(lr[1]);
            java.add(j);
            jna.add(n);
            System.out.printf("round %d/%d: libremvirt %.2f (blocking %.2f)  remvirt-java %.2f  libvirt-java %.2f us/call%n",
                    r, rounds, lr[1], lr[0], j, n);
        }
        double mc = median(c), mb = median(block), mj = median(java), mn = median(jna);
        System.out.printf("%nus/call (median)  libremvirt  libremvirt-block  remvirt-java  libvirt-java%n");
        System.out.printf("unpinned          %10.2f  %16.2f  %12.2f  %12.2f%n", mc, mb, mj, mn);
        System.out.printf("remvirt-java/libremvirt %.2fx (target <= 1.5x: %s); remvirt-java/libremvirt-block %.2fx; "
                + "libvirt-java/remvirt-java %.2fx%n", mj / mc, mj / mc <= 1.5 ? "PASS" : "MISS", mj / mb, mn / mj);
        System.out.println("(reported only; the exit status says whether every call worked)");
        rc.close();
        lc.close();
    }
}
