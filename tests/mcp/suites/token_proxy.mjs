// A loopback proxy that adds the bearer token to every request, for MCP suites that send none
// (the conformance suite has no option for one). Everything else passes through untouched,
// the Host and Origin headers included, so the server's DNS-rebinding check still sees them.
// Usage: node token_proxy.mjs TARGET_URL TOKEN   (prints the port it listens on)
import http from "node:http";

const [target, token] = process.argv.slice(2);
const upstream = new URL(target);

const server = http.createServer((request, response) => {
  const headers = { ...request.headers, authorization: `Bearer ${token}` };
  const forward = http.request(
    { host: upstream.hostname, port: upstream.port, path: request.url, method: request.method, headers },
    (answer) => {
      response.writeHead(answer.statusCode, answer.headers);
      answer.pipe(response);
    },
  );
  forward.on("error", (e) => {
    if (!response.headersSent) response.writeHead(502);
    response.end(String(e));
  });
  request.pipe(forward);
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
