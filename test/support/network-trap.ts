/**
 * A proxy that lets nothing through: agents started with `trap.env` send every HTTP(S) request
 * that is not for loopback here (HTTPS_PROXY and friends; NO_PROXY exempts 127.0.0.1 and
 * localhost, where the fake model APIs listen), the trap records the request line (`CONNECT
 * api.github.com:443 HTTP/1.1`) and answers 403. Tests stay hermetic on a machine with internet
 * access, and can assert what an agent tried to reach. Traffic that ignores the proxy variables
 * (DNS lookups, raw sockets) is not caught.
 */
import type { TCPSocketListener } from "bun";

export type NetworkTrap = AsyncDisposable & {
  /** Proxy variables to add to an agent's environment. */
  env: Record<string, string>;
  /** The first line of every request that reached the trap, in order. */
  attempts: string[];
  /** The hosts of those requests (`api.github.com:443`), without duplicates. */
  hosts(): string[];
  stop(): void;
};

export function startNetworkTrap(): NetworkTrap {
  const attempts: string[] = [];
  const listener: TCPSocketListener<{ head: string }> = Bun.listen<{ head: string }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        socket.data = { head: "" };
      },
      data(socket, chunk) {
        socket.data.head += chunk.toString("latin1");
        const end = socket.data.head.indexOf("\r\n");
        if (end === -1 && socket.data.head.length < 8192) return;
        attempts.push(socket.data.head.slice(0, end === -1 ? 200 : end));
        socket.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
      },
    },
  });
  const proxy = `http://127.0.0.1:${listener.port}`;
  const noProxy = "127.0.0.1,localhost,::1";
  const stop = () => listener.stop(true);
  return {
    env: {
      HTTP_PROXY: proxy,
      HTTPS_PROXY: proxy,
      ALL_PROXY: proxy,
      http_proxy: proxy,
      https_proxy: proxy,
      all_proxy: proxy,
      NO_PROXY: noProxy,
      no_proxy: noProxy,
    },
    attempts,
    hosts: () => [...new Set(attempts.map((line) => line.split(" ")[1] ?? line))],
    stop,
    [Symbol.asyncDispose]: async () => stop(),
  };
}
