// A paced SSE server in its own process (plain node, no build): chat chunks every ITL ms against absolute
// deadlines, so a test can block its own event loop while tokens keep arriving.
// usage: node paced-sse-server.mjs FRAMES TTFT_MS ITL_MS   -> prints the port, then after each response a JSON
// line with the send time of every frame (performance.now() + timeOrigin, ms), and serves until killed.
import http from 'node:http';

const [frames, ttftMs, itlMs] = process.argv.slice(2).map(Number);
const chunk = (delta) =>
  `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: delta }, finish_reason: null }] })}\n\n`;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const t0 = performance.now();
    const sent = [];
    let i = 0;
    const tick = () => {
      sent.push(performance.timeOrigin + performance.now());
      res.write(chunk(`t${i}`));
      if (++i < frames) {
        setTimeout(tick, Math.max(0, t0 + ttftMs + i * itlMs - performance.now()));
        return;
      }
      res.write(
        `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 3, completion_tokens: frames } })}\n\n`,
      );
      res.end('data: [DONE]\n\n');
      console.log(JSON.stringify(sent));
    };
    setTimeout(tick, ttftMs);
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
