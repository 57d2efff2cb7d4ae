// SPDX-License-Identifier: MIT
/*
 * Drives headless Chromium for the viewer tests, through playwright-core with the system's
 * chromium (no browser download). One command per run; prints one line and exits 0 on
 * success, 1 on failure.
 *
 *   node browse.js speedscope URL SHOT.png   page renders a profile: no console errors, no
 *                                            import error text, a canvas of many colours
 *   node browse.js svg FILE.svg SHOT.png     flame graph renders; search and zoom work
 *   node browse.js svg-screen FILE.svg SHOT.png FILE.py
 *                                            in a 1400x900 window, as the file opens, frames
 *                                            of FILE.py are in sight with their names drawn
 *   node browse.js speedscope-export URL OUT.json
 *                                            page renders a profile, then speedscope's own
 *                                            Export button saves what it imported: its
 *                                            evented profiles open and close frames in the
 *                                            nesting speedscope draws (stacks.py checks it)
 *   node browse.js batch JOBS                 each line of the file JOBS is one of the above
 *                                            (COMMAND TARGET OUT, tab-separated, and FILE.py
 *                                            after them for svg-screen), all in one
 *                                            browser, a fresh page each; one line per job
 *                                            ("NAME: ok: ..." or "NAME: FAIL: ..."), exit 1
 *                                            if any failed. Starting Chromium was most of a
 *                                            job's time: the viewer tests run one batch each.
 */
'use strict';
const path = require('path');
const fs = require('fs');
const os = require('os');

const mod = process.env.VIEWERS_DIR ? path.resolve(process.env.VIEWERS_DIR, 'node_modules') : '';
const { chromium } = require(mod ? path.join(mod, 'playwright-core') : 'playwright-core');

/* a job's failure: thrown, so that a batch goes on with its next job */
class JobFail extends Error {}
function fail(msg) {
	throw new JobFail(msg);
}

/* Distinct colours in a PNG screenshot, counted in the page itself (no PNG decoder here). */
async function countColours(page, png) {
	const b64 = fs.readFileSync(png).toString('base64');
	return page.evaluate(async (b64) => {
		const img = new Image();
		await new Promise((ok, bad) => { img.onload = ok; img.onerror = bad; img.src = 'data:image/png;base64,' + b64; });
		/* OffscreenCanvas: createElement('canvas') in an SVG document is no canvas */
		const c = new OffscreenCanvas(img.width, img.height);
		const g = c.getContext('2d');
		g.drawImage(img, 0, 0);
		const d = g.getImageData(0, 0, c.width, c.height).data, seen = new Set();
		for (let i = 0; i < d.length; i += 4 * 7)
			seen.add((d[i] >> 3) << 10 | (d[i + 1] >> 3) << 5 | d[i + 2] >> 3);
		return seen.size;
	}, b64);
}

async function main() {
	const [cmd, target, shot] = process.argv.slice(2);
	if (!cmd || !target || (!shot && cmd !== 'batch')) {
		console.log('FAIL: usage: browse.js speedscope|svg|speedscope-export URL|FILE OUT | batch JOBS');
		process.exit(1);
	}
	let jobs = [[cmd, target, shot]];
	if (cmd === 'batch')
		jobs = fs.readFileSync(target, 'utf8').split('\n').filter((l) => l.trim())
			.map((l) => l.split('\t'));
	const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'xpu-chromium-'));
	/* a fresh profile per run: nothing cached, nothing shared with other runs (other
	 * tests run beside this one, each with its own) */
	let ctx;
	try {
		ctx = await chromium.launchPersistentContext(profileDir, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		viewport: cmd === 'svg-screen' ? { width: 1400, height: 900 } : { width: 1280, height: 800 },
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		       '--disable-background-networking', '--disable-component-update', '--disable-sync'],
		});
	} catch (e) {
		console.log('FAIL: cannot start chromium: ' + e.message.split('\n')[0]);
		fs.rmSync(profileDir, { recursive: true, force: true });
		process.exit(1);
	}
	let failed = 0, next = 0;
	/* BROWSE_PAGES jobs at a time (default 2): each waits a second for its drawing to
	 * settle, time in which another page can work */
	const pages = Math.max(1, parseInt(process.env.BROWSE_PAGES || '2', 10) || 1);
	const worker = async () => {
		while (next < jobs.length) {
			const [c, t, o, a] = jobs[next++];
			/* in a batch, each line says which job it is */
			const name = cmd === 'batch' ? path.basename(o) + ': ' : '';
			const t0 = Date.now();
			try {
				const msg = await runJob(ctx, c, t, o, a === undefined ? process.argv[5] : a);
				console.log(name + msg + (cmd === 'batch' ? ` (${((Date.now() - t0) / 1000).toFixed(1)} s)` : ''));
			} catch (e) {
				failed++;
				console.log(name + 'FAIL: ' + (e instanceof JobFail ? e.message : e.message.split('\n')[0]));
			}
		}
	};
	try {
		await Promise.all(Array.from({ length: Math.min(pages, jobs.length) }, worker));
	} finally {
		await ctx.close();
		fs.rmSync(profileDir, { recursive: true, force: true });
	}
	process.exit(failed ? 1 : 0);
}

/* one job on a fresh page of the shared browser */
async function runJob(ctx, cmd, target, shot, arg) {
	const errors = [];
	const page = await ctx.newPage();
	try {
		page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
		page.on('pageerror', (e) => errors.push('page error: ' + e.message));
		/* speedscope reports a failed import with alert() */
		page.on('dialog', (d) => { errors.push('dialog: ' + d.message()); d.dismiss(); });
		if (cmd === 'speedscope')
			return await speedscope(page, target, shot, errors);
		else if (cmd === 'speedscope-export')
			return await speedscopeExport(page, target, shot, errors);
		else if (cmd === 'svg')
			return await svg(page, target, shot, errors);
		else if (cmd === 'svg-screen')
			return await svgScreen(page, target, shot, arg, errors);
		fail('unknown command ' + cmd);
	} finally {
		await page.close();
	}
}

async function speedscopeExport(page, url, out, errors) {
	/* speedscope saves through a Blob URL and a synthetic link click: keep the Blob's text */
	await page.addInitScript(() => {
		const orig = URL.createObjectURL;
		URL.createObjectURL = function (b) {
			if (b instanceof Blob)
				b.text().then((t) => { window.__xpuExport = t; });
			return orig.call(URL, b);
		};
	});
	await waitProfile(page, url, errors);
	const clicked = await page.evaluate(() => {
		const el = [...document.querySelectorAll('div')].find((d) => d.children.length === 1 &&
			/^\s*\S*\s*Export$/.test(d.textContent));
		if (el)
			el.click();
		return !!el;
	});
	if (!clicked)
		fail('no Export button in speedscope');
	const t0 = Date.now();
	let text = null;
	while (!(text = await page.evaluate(() => window.__xpuExport || null))) {
		if (Date.now() - t0 > 20000)
			fail('speedscope exported nothing within 20 s');
		await page.waitForTimeout(200);
	}
	if (errors.length)
		fail(errors[0]);
	fs.writeFileSync(out, text);
	const p = JSON.parse(text);
	return 'ok: speedscope exported ' + p.profiles.length + ' profiles, ' +
		p.shared.frames.length + ' frames';
}

async function waitProfile(page, url, errors) {
	await page.goto(url, { waitUntil: 'load' });
	/* speedscope draws flame charts on a canvas once the import finished */
	const t0 = Date.now();
	for (;;) {
		if (errors.length)
			fail(errors[0]);
		const done = await page.evaluate(() => {
			const t = document.body.innerText;
			return /Something went wrong|Unrecognized format|Failed to/i.test(t) ||
			       document.querySelectorAll('canvas').length > 0 && /Time Order|Left Heavy|Sandwich/.test(t);
		});
		if (done)
			break;
		if (Date.now() - t0 > 20000)
			fail('speedscope did not show a profile within 20 s: ' + (await page.innerText('body')).slice(0, 120).replace(/\s+/g, ' '));
		await page.waitForTimeout(200);
	}
	await page.waitForTimeout(1000);
}

async function speedscope(page, url, shot, errors) {
	await waitProfile(page, url, errors);
	const text = await page.innerText('body');
	const m = text.match(/.*(Something went wrong|Unrecognized format|Failed to).*/i);
	if (m)
		fail('speedscope import error: ' + m[0]);
	if (errors.length)
		fail(errors[0]);
	await page.screenshot({ path: shot });
	const colours = await countColours(page, shot);
	if (colours < 20)
		fail('speedscope screenshot looks blank: ' + colours + ' colours');
	const title = (await page.title()).replace(/\s+/g, ' ');
	return 'ok: speedscope rendered "' + title + '" with ' + colours + ' colours';
}

async function svg(page, file, shot, errors) {
	await page.goto('file://' + path.resolve(file), { waitUntil: 'load' });
	const r = await page.evaluate(() => {
		const f = window.xpuFlame;
		if (!f)
			return { err: 'script did not run (no window.xpuFlame)' };
		const all = f.frames.length;
		if (all < 2)
			return { err: 'only ' + all + ' frames drawn' };
		/* search: the root always matches "all"; a leaf name matches its share */
		const pctAll = f.search('^all$');
		const matchedText = document.getElementById('matched').textContent;
		const hl = document.querySelectorAll('#frames g.match').length;
		f.clearSearch();
		/*
		 * zoom into the widest frame two levels from the root (the first frame drawn):
		 * it fills the width, others hide; up: 1 where children are above (root at the
		 * bottom), -1 where below (an icicle)
		 */
		let zi = -1, best = -1;
		const up = f.up || 1, y2 = f.frames[0].y - 32 * up;
		f.frames.forEach((x, i) => { if (x.y === y2 && x.w > best) { best = x.w; zi = i; } });
		if (zi < 0)
			zi = 1;
		const z = f.frames[zi];
		const leaf = f.frames.filter((x) => up * (z.y - x.y) > 0 && x.x >= z.x && x.x + x.w <= z.x + z.w)[0];
		const pctLeaf = leaf ? f.search(leaf.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : 0;
		f.zoom(zi);
		const zw = +z.r.getAttribute('width');
		const hidden = document.querySelectorAll('#frames g.hide').length;
		const unzoomShown = !document.getElementById('unzoom').classList.contains('hide');
		const leafW = leaf ? +leaf.r.getAttribute('width') : 0;
		f.reset();
		const back = +z.r.getAttribute('width');
		return { all, pctAll, matchedText, hl, zw, hidden, unzoomShown, leafW, leafOrig: leaf ? leaf.w : 0,
			 back, orig: z.w, zname: z.name, pctLeaf, svgW: document.documentElement.getAttribute('width') };
	});
	if (r.err)
		fail(r.err);
	if (errors.length)
		fail(errors[0]);
	if (Math.abs(r.pctAll - 100) > 0.01 || !/Matched: 100.00%/.test(r.matchedText) || r.hl !== 1)
		fail('search for the root: ' + r.pctAll + '% "' + r.matchedText + '", ' + r.hl + ' highlighted');
	if (!(r.pctLeaf > 0 && r.pctLeaf <= 100))
		fail('search for a leaf matched ' + r.pctLeaf + '%');
	if (Math.abs(r.zw - (+r.svgW - 20)) > 0.1 || !r.unzoomShown)
		fail('zoom into "' + r.zname + '": width ' + r.zw + ' of ' + r.svgW + ', reset shown ' + r.unzoomShown);
	if (r.leafW + 0.01 < r.leafOrig)
		fail('zoom did not widen the frames above the zoomed one');
	if (Math.abs(r.back - r.orig) > 0.01)
		fail('reset zoom left width ' + r.back + ', was ' + r.orig);
	await page.screenshot({ path: shot });
	const colours = await countColours(page, shot);
	if (colours < 8)
		fail('svg screenshot looks blank: ' + colours + ' colours');
	return `ok: svg ${r.all} frames, ${colours} colours; search leaf ${r.pctLeaf.toFixed(2)}%, zoom "${r.zname.slice(0, 40)}" hid ${r.hidden}`;
}

/*
 * What the first screen shows, scrolled as the file opens itself: the frames whose rectangle
 * lies in the window and whose name is drawn (wide enough for its label), and of them those
 * of the script (names ending "(FILE.py)" or "(FILE.py:LINE)").
 */
async function svgScreen(page, file, shot, script, errors) {
	if (!script)
		fail('usage: browse.js svg-screen FILE.svg SHOT.png SCRIPT.py');
	/* the window of the check, also where a batch's browser opened at another size */
	await page.setViewportSize({ width: 1400, height: 900 });
	/* a PyTorch trace's graph is 5 MB, 27,000 frames: slow to load on a loaded machine */
	await page.goto('file://' + path.resolve(file), { waitUntil: 'load', timeout: 100000 });
	await page.waitForTimeout(300);
	const r = await page.evaluate((script) => {
		if (!window.xpuFlame)
			return { err: 'script did not run (no window.xpuFlame)' };
		const vw = window.innerWidth, vh = window.innerHeight, seen = [], ours = [];
		document.querySelectorAll('#frames g').forEach((g) => {
			const b = g.querySelector('rect').getBoundingClientRect();
			const label = g.querySelector('text').textContent;
			if (b.bottom <= 0 || b.top >= vh || b.right <= 0 || b.left >= vw || !label)
				return;
			const t = g.firstElementChild.textContent, name = t.substring(0, t.lastIndexOf(' ('));
			seen.push(name);
			if (name.endsWith('(' + script + ')') || name.indexOf('(' + script + ':') >= 0)
				ours.push(name);
		});
		return { seen: seen.length, ours, scrollY: window.scrollY, height: document.documentElement.getAttribute('height'), vw, vh };
	}, script);
	if (r.err)
		fail(r.err);
	if (errors.length)
		fail(errors[0]);
	await page.screenshot({ path: shot });
	if (r.ours.length < 2)
		fail(`first screen (scrolled to ${r.scrollY} of ${r.height} px) shows ${r.seen} labelled frames, ` +
		     `${r.ours.length} of ${script}: ${r.ours.join(', ')}`);
	if (r.vw !== 1400 || r.vh !== 900)
		fail(`the window is ${r.vw}x${r.vh}, not 1400x900`);
	return `ok: first screen (1400x900) shows ${r.seen} labelled frames, ${r.ours.length} of ${script} (${r.ours.slice(0, 3).join(', ')})`;
}

main().catch((e) => { console.log('FAIL: ' + e.message.split('\n')[0]); process.exit(1); });
