// serve-ws.mjs PORT MS: headless Chromium's own WebSocket on serve's /ws,
// as CCW's dashboard opens it (tests/regress/serve-ws.sh): the page gets
// the ccw_token cookie from /api/auth/token, opens ws://HOST/ws, creates
// a loop, and must see its LOOP_STATE_UPDATE, then closes with 1000.
// Prints "ok 1 DESC" / "ok 0 DESC" lines (t_probe_out).
import { createRequire } from 'module';

const [port, ms] = [process.argv[2], Number(process.argv[3] || 10000)];
const require = createRequire(process.env.PW_DIR + '/');
const { chromium } = require('playwright-core');
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM, args: ['--no-sandbox'] });
const page = await browser.newPage();
await page.goto(`http://127.0.0.1:${port}/`);
const got = await page.evaluate((ms) => new Promise((resolve) => {
  const out = { open: false, created: '', event: null, close: 0 };
  const seen = [];
  let ws;
  // the loop's event may come before or after the POST's answer
  const check = () => {
    const ev = seen.find((e) => out.created && e.loop_id === out.created);
    if (ev && !out.event) {
      out.event = ev;
      ws.close(1000);
    }
  };
  fetch('/api/auth/token').then(() => {
    ws = new WebSocket(`ws://${location.host}/ws`);
    ws.onopen = async () => {
      out.open = true;
      const r = await fetch('/api/loops/v2', { method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ title: 'from the browser' }) });
      const d = (await r.json()).data || {};
      out.created = d.loop_id || d.id || '';
      check();
    };
    ws.onmessage = (e) => {
      seen.push(JSON.parse(e.data));
      check();
    };
    ws.onclose = (e) => { out.close = e.code; resolve(out); };
  });
  setTimeout(() => resolve(out), ms);
}), ms);
const say = (good, desc) => console.log(`ok ${good ? 1 : 0} ${desc}`);
say(got.open, 'Chromium opens /ws with the cookie alone');
say(got.event && got.event.type === 'LOOP_STATE_UPDATE' &&
    got.event.status === 'created' && got.event.timestamp,
    'the page sees the loop it created as a LOOP_STATE_UPDATE');
say(got.close === 1000, `its close is answered (code ${got.close})`);
await browser.close();
