/**
 * A browser that asks for nothing itself: no DNS probe, background networking, component update,
 * safe-browsing lookup or metrics. Proved with a canary in a network namespace of the test's own
 * (test/browser/silence-run.ts runs there): every IPv4 and IPv6 address is local (so any packet,
 * wherever it is sent, is counted by the namespace's own counters, and none leaves), a link looks
 * like the internet to Chromium (a veth pair with a default route: with loopback alone it thinks
 * itself offline and stays quieter than it would be), and the system resolver is 127.0.0.1, where
 * the canary listens on port 53. While the service's browser loads pages that fail to navigate
 * (an unknown name, a refused address, by the link and by a script) and pages that reach for a
 * preconnect, a DNS prefetch and a STUN server, nothing is sent at all, not even a multicast
 * group's join (IGMP, which WebRTC's mDNS names made before `WebRtcHideLocalIpsWithMdns` was off); the controls show that the
 * canary hears this process's lookup and a bare Chromium's. The browser's real command line is
 * checked too: one `--disable-features` list Chromium reads, holding every earlier one.
 *
 * Needs `unshare` (a user namespace, or root) and `ip`; skipped with the reason printed when the
 * machine has neither.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { browserAvailable } from '../../lib/browser/availability';
import { pageHeapMb } from '../../lib/browser/lanes';
import { QUIET_FEATURES, QUIET_SWITCHES } from '../../lib/browser/switches';
import { loadConfig } from '../../lib/config';

jest.setTimeout(120_000);

/** The namespaces to run in: a user namespace where allowed, else root's. */
const VARIANTS = [
  ['--user', '--map-root-user', '--net', '--mount'],
  ['--net', '--mount'],
];

/** What this machine offers, or why the test cannot run here. */
function namespaces(): { args: string[] } | { skip: string } {
  if (!browserAvailable(loadConfig(process.env))) return { skip: `no browser at ${loadConfig(process.env).browserPath}` };
  if (spawnSync('ip', ['-V']).status !== 0) return { skip: 'no `ip` (iproute2) to set up the namespace' };
  for (const args of VARIANTS) {
    if (spawnSync('unshare', [...args, 'ip', 'link', 'set', 'lo', 'up']).status === 0) return { args };
  }
  return { skip: 'network namespaces are unavailable here (unshare failed as a user namespace and as root)' };
}

/**
 * The namespace's network: loopback, a veth pair that looks like the internet (without IPv6, so
 * the kernel sends none of its own router solicitations on it), every address local, the resolver
 * at 127.0.0.1. Where the pair cannot be made, loopback alone (Chromium then thinks itself offline).
 */
const SETUP = `set -e
ip link set lo up
if echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6 && ip link add canary0 type veth peer name canary1; then
  ip addr add 10.200.0.2/24 dev canary0; ip link set canary1 up; ip link set canary0 up
  ip route add default via 10.200.0.1 dev canary0
fi
ip route add local default dev lo table local
ip -6 route add local ::/0 dev lo table local || true
if [ -e /etc/resolv.conf ]; then mount --bind "$CANARY_RESOLV" /etc/resolv.conf; fi
exec "$CANARY_NODE" "$CANARY_TSX" "$CANARY_RUN"`;

interface Sent {
  sent: Record<string, number>;
  queries: string[];
}
interface Report {
  outcomes: Record<string, string>;
  ours: Sent;
  commandLine: string[];
  lookupControl: Sent;
  bareControl: Sent;
}

const where = namespaces();
if ('skip' in where) process.stdout.write(`browser-silence test skipped: ${where.skip}\n`);
const inNamespace = 'skip' in where ? test.skip : test;

let report: Report;

beforeAll(async () => {
  if ('skip' in where) return;
  const dir = mkdtempSync(path.join(tmpdir(), 'linklens-canary-'));
  const resolv = path.join(dir, 'resolv.conf');
  writeFileSync(resolv, 'nameserver 127.0.0.1\n');
  try {
    const child = spawn('unshare', [...where.args, 'sh', '-c', SETUP], {
      cwd: path.join(__dirname, '../..'),
      env: {
        ...process.env,
        CANARY_RESOLV: resolv,
        CANARY_NODE: process.execPath,
        CANARY_TSX: require.resolve('tsx/cli'),
        CANARY_RUN: path.join(__dirname, 'silence-run.ts'),
      },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const line = out.split('\n').find((l) => l.startsWith('SILENCE '));
    if (code !== 0 || !line) throw new Error(`the namespace's run failed (${code}):\n${out}\n${err.slice(-4000)}`);
    report = JSON.parse(line.slice('SILENCE '.length));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const NOTHING = { ipv4Packets: 0, ipv6Packets: 0, unroutable: 0, udpDatagrams: 0, udp6Datagrams: 0, tcpOpens: 0 };

inNamespace('the pages failed to navigate, or reached only for what is not a request', () => {
  expect(report.outcomes).toEqual({
    'http://start.test/to-unknown-name': expect.stringMatching(/^the page ended on the browser's error page/),
    'http://start.test/to-refused-address': expect.stringMatching(/^the page ended on the browser's error page/),
    'http://start.test/reaching': 'loaded',
    'http://unknown-name.invalid/': expect.stringMatching(/net::ERR_ADDRESS_UNREACHABLE/),
    'http://10.9.9.9:81/': expect.stringMatching(/net::ERR_FAILED/),
  });
});

inNamespace('the browser sent nothing: no packet of any kind, no DNS query', () => {
  expect(report.ours).toEqual({ sent: NOTHING, queries: [] });
});

inNamespace('the canary hears what is sent: a lookup by this process, and a bare Chromium navigating to an unknown name', () => {
  expect(report.lookupControl.sent.udpDatagrams + report.lookupControl.sent.udp6Datagrams).toBeGreaterThan(0);
  expect(report.lookupControl.queries.some((q) => q.includes('canary-control'))).toBe(true);
  expect(report.bareControl.queries.some((q) => q.includes('canary-control'))).toBe(true);
});

inNamespace("the browser's command line: the quiet switches, the heap cap, and one feature list holding every earlier one", () => {
  const args = report.commandLine;
  for (const flag of QUIET_SWITCHES) expect(args).toContain(flag);
  const lists = args.filter((a) => a.startsWith('--disable-features=')).map((a) => a.slice('--disable-features='.length).split(','));
  const read = lists.at(-1) ?? [];
  // Chromium reads only the last list: it holds every name of the earlier ones (playwright-core's), and ours.
  expect(
    lists
      .slice(0, -1)
      .flat()
      .filter((f) => !read.includes(f)),
  ).toEqual([]);
  expect(QUIET_FEATURES.filter((f) => !read.includes(f))).toEqual([]);
  expect(args.filter((a) => a.startsWith('--js-flags='))).toEqual([`--js-flags=--max-old-space-size=${pageHeapMb(loadConfig(process.env).browserPageMb)}`]);
});
