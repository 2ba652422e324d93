// Jest setup (every test file): no test may open a TCP connection to anything but loopback.
// If the SSRF guard under test were broken, a vector naming 10.x, 169.254.169.254 or a
// public address would still never leave this machine: the socket is refused here, after
// DNS, with code EBLOCKEDBYTEST.
const net = require('node:net');
const dns = require('node:dns');

const isLoopback = (address) => {
  const a = String(address)
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  return /^127\.\d+\.\d+\.\d+$/.test(a) || a === '::1' || /^::ffff:127\.\d+\.\d+\.\d+$/.test(a) || a === '::ffff:7f00:1';
};

const blocked = (address) => Object.assign(new Error(`test safety net: connection to non-loopback address ${address} refused`), { code: 'EBLOCKEDBYTEST' });

const original = net.Socket.prototype.connect;
net.Socket.prototype.connect = function connect(...args) {
  let options;
  let rest;
  if (Array.isArray(args[0])) {
    // net.createConnection passes its already-normalised [options, callback] array.
    args = args[0].slice(0, 2).filter((x) => x !== null && x !== undefined);
  }
  if (args[0] !== null && typeof args[0] === 'object' && !Array.isArray(args[0])) {
    options = { ...args[0] };
    rest = args.slice(1);
  } else if (typeof args[0] === 'string' && !/^\d+$/.test(args[0])) {
    return original.apply(this, args); // IPC path
  } else {
    options = { port: args[0], host: typeof args[1] === 'string' ? args[1] : 'localhost' };
    rest = args.slice(typeof args[1] === 'string' ? 2 : 1);
  }
  if (options.path) return original.call(this, options, ...rest);
  const host = options.host ?? 'localhost';
  if (net.isIP(host)) {
    if (!isLoopback(host)) {
      process.nextTick(() => this.destroy(blocked(host)));
      return this;
    }
    return original.call(this, options, ...rest);
  }
  const lookup = options.lookup ?? dns.lookup;
  options.lookup = (hostname, opts, cb) => {
    lookup(hostname, opts, (err, address, family) => {
      if (err) return cb(err);
      const list = Array.isArray(address) ? address.map((a) => a.address) : [address];
      const bad = list.find((a) => !isLoopback(a));
      if (bad) return cb(blocked(bad));
      return cb(null, address, family);
    });
  };
  return original.call(this, options, ...rest);
};
