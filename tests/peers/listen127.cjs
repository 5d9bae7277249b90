// Preload (`node --require ./listen127.cjs ...`) that keeps every net.Server on 127.0.0.1.
// server-everything listens on all interfaces and has no HOST option; tests must stay on loopback.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === "object" && !Array.isArray(first) && !("fd" in first) && !("path" in first)) {
    args[0] = { ...first, host: "127.0.0.1" };
    return listen.apply(this, args);
  }
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    const cb = typeof args[args.length - 1] === "function" ? args[args.length - 1] : undefined;
    const options = { port: Number(first), host: "127.0.0.1" };
    return cb ? listen.call(this, options, cb) : listen.call(this, options);
  }
  return listen.apply(this, args);
};
