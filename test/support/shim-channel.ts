/**
 * A shim's channel to the governance service, opened by hand (docs/governance.md, The shim's
 * channel): the WebSocket at `/governance/channel` opened with the session secret, each request
 * `{id, method, path, body}` answered `{id, status, body}`. What tests and attack fixtures use to
 * ask the service as one particular shim: tasks, relays and grants belong to the channel they came in on.
 */
export type ChannelAnswer = { status: number; body: any };

export type ShimChannel = {
  ask(method: "GET" | "POST", path: string, body?: unknown): Promise<ChannelAnswer>;
  close(): void;
};

export async function openShimChannel(endpoint: string, secret: string): Promise<ShimChannel> {
  const socket = new WebSocket(`${endpoint.replace(/^http/, "ws")}/governance/channel`, { headers: { authorization: `Bearer ${secret}` } } as unknown as string[]);
  const waiting = new Map<number, (answer: ChannelAnswer) => void>();
  socket.onmessage = (event) => {
    for (const line of String(event.data).split("\n")) {
      const answer = JSON.parse(line) as { id?: number } & ChannelAnswer;
      if (answer.id !== undefined) waiting.get(answer.id)?.(answer);
    }
  };
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error("the shim channel could not be opened"));
  });
  let next = 1;
  return {
    ask: (method, path, body) =>
      new Promise((resolve) => {
        const id = next++;
        waiting.set(id, (answer) => {
          waiting.delete(id);
          resolve({ status: answer.status, body: answer.body });
        });
        socket.send(JSON.stringify({ id, method, path, ...(body === undefined ? {} : { body }) }));
      }),
    close: () => socket.close(),
  };
}
