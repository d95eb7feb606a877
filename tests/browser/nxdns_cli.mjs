// The nxdns command line as the browser tests run it: under the emulator
// when the suite runs under qemu-user, with stdout and stderr in one string.
import { spawn } from "node:child_process";

const { env } = process;

export function run(args) {
  const cmd = env.NXDNS_EMULATOR ? [...env.NXDNS_EMULATOR.split(" "), env.NXDNS_BIN] : [env.NXDNS_BIN];
  return new Promise((resolve) => {
    const c = spawn(cmd[0], [...cmd.slice(1), ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    c.stdout.on("data", (d) => (out += d));
    c.stderr.on("data", (d) => (out += d));
    c.on("close", (code) => resolve({ code, out }));
  });
}
