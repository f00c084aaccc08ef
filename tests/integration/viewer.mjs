// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// viewer.mjs - open profiles in the speedscope web app in headless Chromium
// and check that the page shows the given names.  Run by viewer_check and
// viewer_run in tests/integration/viewer.sh; Node's standard library only.
//
//   node viewer.mjs --speedscope DIR [options] --job FILE PNG VIEW NAME... [--job ...]
//
// How:
//  - a static HTTP server on 127.0.0.1 (port chosen by the kernel) serves
//    speedscope's built app (DIR/dist/release) and each job's FILE, as the
//    bytes on disk, under /profile/N/BASENAME;
//  - Debian's Chromium runs headless and is driven over the DevTools
//    protocol on a pipe (--remote-debugging-pipe: no port, no WebSocket);
//    it exits by itself when this process dies and the pipe closes;
//  - each job gets a new tab on index.html#view=VIEW&profileURL=..., which
//    is speedscope's own way to load a profile from a URL; we wait until it
//    has imported the file (no alert, no "Something went wrong") and drawn
//    text on its flame graph canvas, then a screenshot of VIEW (time-ordered,
//    left-heavy or sandwich) goes to PNG;
//  - the flame graph is a canvas, so names are read where speedscope puts
//    them in the DOM: the Sandwich view's table of functions.  Its search
//    box (Ctrl+F, typed as keyboard input) filters the table, the table is
//    scrolled through (it renders only the rows in view), and a NAME is
//    found when a row is exactly NAME, or NAME followed by " {...}", which
//    is how speedscope names a trace event that has args.  Every profile in
//    the file is searched (a trace has one per thread, switched with the
//    'n' key).  The unfiltered table goes to PNG with .sandwich.png;
//  - a NAME written "first:TEXT" must be part of the name of the profile
//    the page opens on (speedscope's format says which: activeProfileIndex;
//    a Chrome trace opens on its lowest pid and tid);
//  - a NAME written "profile:TEXT" must instead be part of a profile's name
//    (for a trace, "THREAD_NAME (pid P, tid T)" from thread_name events);
//  - speedscope's warnings that a trace's begin and end events do not nest
//    ("Tried to end ...", "... was still open at end of profile") fail the
//    job: the page would show a nesting other than the file's.
//
// Prints "viewer: ..." lines, and for each job one "viewer: PASS FILE" or
// "viewer: FAIL FILE: why".  Exits 0 when every job passed, 1 when a job
// failed, 2 when the check could not run (bad arguments, Chromium did not
// start or died, timeout): then no job counts as passed.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const EXIT_FAILED = 1;
const EXIT_ERROR = 2;
const VIEWS = ['time-ordered', 'left-heavy', 'sandwich'];
const USAGE = 'usage: viewer.mjs --speedscope DIR [--chromium BIN] [--timeout SEC] ' +
	'[--pgid-file F] [--chromium-log F] --job FILE PNG VIEW NAME... [--job ...]';

process.stdout.on('error', () => {}); // a closed stdout must not stop the clean-up

function log(msg) {
	process.stdout.write(`viewer: ${msg}\n`);
}

class CheckFailed extends Error {}

let chrome = null;
let finished = false;
let userDataDir = null;
let server = null;

// Chromium and everything it started share one process group (detached).
function cleanup() {
	if (chrome && chrome.exitCode === null && chrome.signalCode === null) {
		try {
			process.kill(-chrome.pid, 'SIGKILL');
		} catch {
			/* already gone */
		}
	}
	if (server)
		server.close();
	if (userDataDir)
		fs.rmSync(userDataDir, { recursive: true, force: true, maxRetries: 3 });
}

function die(code, msg) {
	finished = true;
	log(msg);
	cleanup();
	process.exit(code);
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
	process.on(sig, () => die(EXIT_ERROR, `ERROR: stopped by ${sig}`));

// --- arguments
const opt = { chromium: 'chromium', timeout: '60', width: '1400', height: '900' };
const jobs = [];
{
	const args = process.argv.slice(2);
	for (let i = 0; i < args.length;) {
		const a = args[i++];
		if (a === '--job') {
			if (i + 3 > args.length)
				die(EXIT_ERROR, USAGE);
			const job = { file: args[i], png: args[i + 1], view: args[i + 2], names: [] };
			i += 3;
			while (i < args.length && args[i] !== '--job')
				job.names.push(args[i++]);
			jobs.push(job);
		} else if (/^--(speedscope|chromium|timeout|pgid-file|chromium-log|width|height)$/.test(a) &&
			i < args.length) {
			opt[a.slice(2)] = args[i++];
		} else {
			die(EXIT_ERROR, USAGE);
		}
	}
}
if (!opt.speedscope || jobs.length === 0 || jobs.some(j => j.names.length === 0))
	die(EXIT_ERROR, USAGE);
for (const job of jobs)
	if (!VIEWS.includes(job.view))
		die(EXIT_ERROR, `VIEW must be one of ${VIEWS.join(', ')}, not ${job.view}`);
const appDir = path.join(opt.speedscope, 'dist', 'release');
if (!fs.existsSync(path.join(appDir, 'index.html')))
	die(EXIT_ERROR, `ERROR: no speedscope web app in ${appDir}`);

const started = Date.now();
const deadline = started + Number(opt.timeout) * 1000;
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
const seconds = (from = started) => ((Date.now() - from) / 1000).toFixed(1);

// --- the static HTTP server: the app's files and the jobs' files, nothing else
const served = new Map(fs.readdirSync(appDir).map(f => [`/${f}`, path.join(appDir, f)]));
jobs.forEach((job, n) => {
	job.url = `/profile/${n}/${encodeURIComponent(path.basename(job.file))}`;
	served.set(job.url, job.file);
});
const types = {
	'.html': 'text/html; charset=utf-8',
	'.js': 'text/javascript',
	'.css': 'text/css',
	'.wasm': 'application/wasm',
	'.png': 'image/png',
	'.woff2': 'font/woff2',
};
const requested = new Set();

server = http.createServer((req, res) => {
	const pathname = new URL(req.url, 'http://127.0.0.1').pathname;
	const file = served.get(pathname);
	requested.add(pathname);
	if (!file || !fs.existsSync(file)) {
		res.writeHead(404).end();
		return;
	}
	// a profile goes as the bytes on disk: a .gz stays gzipped (speedscope
	// inflates it itself, as it does a file opened from disk)
	const profile = pathname.startsWith('/profile/');
	// the app's files may be cached (the next tab loads faster), a profile not
	res.writeHead(200, {
		'content-type': profile ? 'application/octet-stream'
			: types[path.extname(file)] || 'application/octet-stream',
		'cache-control': profile ? 'no-store' : 'max-age=600',
	});
	fs.createReadStream(file).pipe(res);
});
await new Promise((resolve, reject) => {
	server.once('error', reject);
	server.listen(0, '127.0.0.1', resolve);
});
const origin = `http://127.0.0.1:${server.address().port}`;

// --- Chromium, headless, DevTools protocol on fds 3 (to it) and 4 (from it)
userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxprof-viewer-'));
const chromeArgs = [
	'--headless',
	'--no-sandbox', // as root; the pages are our own, served on loopback
	'--remote-debugging-pipe',
	`--user-data-dir=${userDataDir}`,
	`--window-size=${opt.width},${opt.height}`,
	// speedscope draws with WebGL: software rendering, there is no GPU
	'--use-angle=swiftshader',
	'--enable-unsafe-swiftshader',
	// no network but loopback, no background services (the network is
	// closed here: they would only fail, and slowly)
	'--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
	'--no-proxy-server',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
	'--disable-quic',
	'--disable-extensions',
	'--disable-default-apps',
	'--no-first-run',
	'--no-default-browser-check',
	'--disable-dev-shm-usage',
	'--hide-scrollbars',
	'--mute-audio',
	'about:blank',
];
const chromeLog = opt['chromium-log'] ? fs.openSync(opt['chromium-log'], 'w') : 'ignore';
try {
	chrome = spawn(opt.chromium, chromeArgs, {
		stdio: ['ignore', chromeLog, chromeLog, 'pipe', 'pipe'],
		detached: true,
	});
} catch (e) {
	die(EXIT_ERROR, `ERROR: cannot start ${opt.chromium}: ${e.message}`);
}
chrome.on('error', e => die(EXIT_ERROR, `ERROR: cannot start ${opt.chromium}: ${e.message}`));
chrome.on('exit', (code, sig) => {
	if (!finished)
		die(EXIT_ERROR, `ERROR: Chromium exited early (${sig || `status ${code}`})` +
			(opt['chromium-log'] ? `; its log: ${opt['chromium-log']}` : ''));
});
if (opt['pgid-file'])
	fs.writeFileSync(opt['pgid-file'], `${chrome.pid}\n`);

// --- a DevTools protocol client: JSON messages, each ending in a NUL byte
let lastId = 0;
const pending = new Map();
const sessions = new Map(); // session id -> event handler
let inbuf = Buffer.alloc(0);

chrome.stdio[4].on('data', chunk => {
	inbuf = Buffer.concat([inbuf, chunk]);
	for (let end; (end = inbuf.indexOf(0)) >= 0;) {
		const msg = JSON.parse(inbuf.subarray(0, end).toString('utf8'));
		inbuf = inbuf.subarray(end + 1);
		const wait = msg.id !== undefined && pending.get(msg.id);
		if (wait) {
			pending.delete(msg.id);
			if (msg.error)
				wait.reject(new Error(`${wait.method}: ${msg.error.message}`));
			else
				wait.resolve(msg.result);
		} else if (msg.sessionId && sessions.has(msg.sessionId)) {
			sessions.get(msg.sessionId)(msg);
		}
	}
});
chrome.stdio[3].on('error', () => {}); // Chromium gone: its exit handler says so

function send(method, params = {}, sessionId = undefined) {
	const left = deadline - Date.now();
	if (left <= 0)
		return Promise.reject(new Error(`timed out (${opt.timeout} s) before ${method}`));
	return new Promise((resolve, reject) => {
		const id = ++lastId;
		const timer = setTimeout(() => {
			pending.delete(id);
			reject(new Error(`timed out (${opt.timeout} s) waiting for ${method}`));
		}, left);
		pending.set(id, {
			method,
			resolve: v => { clearTimeout(timer); resolve(v); },
			reject: e => { clearTimeout(timer); reject(e); },
		});
		const msg = { id, method, params };
		if (sessionId)
			msg.sessionId = sessionId;
		chrome.stdio[3].write(`${JSON.stringify(msg)}\0`);
	});
}

// Runs in each page before speedscope's script: records what speedscope
// writes on its canvases (flame graph labels, time axis), to know that it
// has drawn the profile.
const CANVAS_TEXT_HOOK = `(() => {
	const seen = { calls: 0, texts: new Set() };
	window.__ctxprofViewer = seen;
	const fillText = CanvasRenderingContext2D.prototype.fillText;
	CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
		seen.calls++;
		if (seen.texts.size < 50000)
			seen.texts.add(String(text));
		return fillText.call(this, text, ...rest);
	};
})();`;

// In the page: where the app is.  The view tabs show only with a profile,
// in a toolbar whose middle is the profile's name ("NAME (k/N)" when the
// file has N profiles).
function pageState() {
	const body = document.body ? document.body.innerText : '';
	const tab = [...document.querySelectorAll('div')]
		.find(d => d.children.length <= 1 && d.textContent.trim().endsWith('Time Order'));
	let title = null;
	if (tab && tab.parentElement.parentElement) {
		const bar = tab.parentElement.parentElement;
		const lines = e => e.innerText.split('\n').map(l => l.trim()).filter(Boolean);
		const edges = new Set([...lines(bar.firstElementChild), ...lines(bar.lastElementChild)]);
		title = lines(bar).find(l => !edges.has(l)) || null;
	}
	const active = document.activeElement;
	return {
		error: body.includes('Something went wrong'),
		tabs: !!tab && body.includes('Sandwich') && body.includes('Left Heavy'),
		drawn: window.__ctxprofViewer ? window.__ctxprofViewer.calls : 0,
		title,
		searching: !!active && active.tagName === 'INPUT' && active.placeholder !== 'Filter...',
	};
}

// In the page: the Sandwich table's rows left by the search box, scrolled
// through (only the rows in view are in the DOM); is WANT among them?
// First wait (up to 200 frames) for the table to show the search: every row
// holds WANT, or the row saying that nothing does.
async function sandwichRows(want) {
	const frames = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
	const th = [...document.querySelectorAll('th')].find(t => t.textContent.trim().endsWith('Symbol Name'));
	if (!th)
		return { error: 'no Sandwich table in the page' };
	const view = th.closest('table').nextElementSibling;
	const lower = want.toLocaleLowerCase();
	for (let wait = 0; ; wait++) {
		await frames();
		const shown = [...view.querySelectorAll('tr')].map(tr => tr.textContent.toLocaleLowerCase());
		if (shown.length && shown.every(t => t.includes(lower)))
			break;
		if (wait === 200)
			return { error: `the Sandwich table does not show the search for "${want}"` };
	}
	const names = new Set();
	for (let step = 0; step < 5000; step++) {
		for (const tr of view.querySelectorAll('tr'))
			if (tr.lastElementChild)
				names.add(tr.lastElementChild.textContent);
		if (view.scrollTop + view.clientHeight >= view.scrollHeight - 1)
			break;
		view.scrollTop += Math.max(20, view.clientHeight - 40);
		await frames();
	}
	view.scrollTop = 0;
	const all = [...names];
	return {
		rows: all.length,
		exact: names.has(want),
		withArgs: all.find(n => n.startsWith(`${want} {`) && n.endsWith('}')) || null,
		sample: all.slice(0, 5),
	};
}

// One tab: a job's file in speedscope.
class Page {
	constructor(job) {
		this.job = job;
		this.console = [];
		this.exceptions = [];
		this.dialog = null;
	}

	async open() {
		const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
		this.targetId = targetId;
		this.session = (await send('Target.attachToTarget', { targetId, flatten: true })).sessionId;
		sessions.set(this.session, msg => this.event(msg));
		await this.send('Page.enable');
		await this.send('Runtime.enable');
		await this.send('Page.addScriptToEvaluateOnNewDocument', { source: CANVAS_TEXT_HOOK });
		await this.send('Emulation.setDeviceMetricsOverride', {
			width: Number(opt.width), height: Number(opt.height), deviceScaleFactor: 1, mobile: false,
		});
	}

	async close() {
		sessions.delete(this.session);
		await send('Target.closeTarget', { targetId: this.targetId }).catch(() => {});
	}

	send(method, params) {
		return send(method, params, this.session);
	}

	event(msg) {
		const p = msg.params;
		if (msg.method === 'Runtime.consoleAPICalled') {
			this.console.push(p.args.map(a => a.value ?? a.description ?? '').join(' '));
		} else if (msg.method === 'Runtime.exceptionThrown') {
			const d = p.exceptionDetails;
			this.exceptions.push(d.exception?.description?.split('\n')[0] ?? d.text);
		} else if (msg.method === 'Page.javascriptDialogOpening') {
			// speedscope says "Unrecognized format!" in an alert(): keep the
			// message and dismiss it, or the page stays blocked
			this.dialog = p.message;
			this.send('Page.handleJavaScriptDialog', { accept: true }).catch(() => {});
		}
	}

	// Evaluate FN's source in the page, called with ARG; its value.
	async evaluate(fn, arg) {
		const r = await this.send('Runtime.evaluate', {
			expression: `(${fn})(${JSON.stringify(arg)})`, returnByValue: true, awaitPromise: true,
		});
		if (r.exceptionDetails)
			throw new Error(`in the page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
		return r.result.value;
	}

	async waitFor(what, test, pollMs = 100) {
		for (;;) {
			if (this.dialog)
				throw new CheckFailed(`speedscope said: ${this.dialog}`);
			const state = await this.evaluate(pageState);
			if (state.error)
				throw new CheckFailed('speedscope shows "Something went wrong" (page exceptions: ' +
					`${this.exceptions.join('; ') || 'none'})`);
			if (test(state))
				return state;
			if (Date.now() + pollMs >= deadline)
				throw new Error(`timed out (${opt.timeout} s) waiting for ${what}`);
			await sleep(pollMs);
		}
	}

	async screenshot(file) {
		const shot = await this.send('Page.captureScreenshot', { format: 'png' });
		fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
		fs.writeFileSync(file, Buffer.from(shot.data, 'base64'));
	}

	// Type TEXT into speedscope's search box, opened with Ctrl+F, or with
	// its text selected when it is open already.
	async search(text) {
		const open = await this.evaluate(() => {
			const input = [...document.querySelectorAll('input')]
				.find(i => i.offsetParent !== null && i.placeholder !== 'Filter...');
			if (!input)
				return false;
			input.focus();
			input.select();
			return true;
		});
		if (!open) {
			for (const type of ['rawKeyDown', 'keyUp'])
				await this.send('Input.dispatchKeyEvent', {
					type, key: 'f', code: 'KeyF', modifiers: 2 /* Ctrl */, windowsVirtualKeyCode: 70,
				});
			await this.waitFor('Ctrl+F to open the search box', s => s.searching);
		}
		await this.send('Input.insertText', { text });
	}
}

async function runJob(job, n) {
	const t0 = Date.now();
	const tag = `[${n + 1}/${jobs.length} ${path.basename(job.file)}]`;
	const say = msg => log(`${tag} ${msg}`);
	if (!fs.statSync(job.file, { throwIfNoEntry: false })?.isFile())
		throw new CheckFailed(`no such file: ${job.file}`);
	const page = new Page(job);
	await page.open();
	try {
		await page.send('Page.navigate', {
			url: `${origin}/index.html#view=${job.view}&profileURL=${encodeURIComponent(job.url)}`,
		});
		await page.waitFor('the profile to load', s => s.tabs);
		if (!requested.has(job.url))
			throw new CheckFailed('the page never asked for the file');
		const state = await page.waitFor('the flame graph to be drawn', s => s.drawn > 0);
		const importer = page.console.find(l => l.startsWith('Importing as'));
		say(`loaded in ${seconds(t0)} s: speedscope says "${importer || 'no importer named'}"`);
		await page.evaluate(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))));
		await page.screenshot(job.png);
		const drawn = new Set(await page.evaluate(() => [...window.__ctxprofViewer.texts]));
		say(`screenshot of the ${job.view} view: ${job.png}`);

		const failures = [];
		const nesting = page.console.filter(l => /Tried to end|was still open at end of profile/.test(l));
		if (nesting.length) {
			failures.push(`speedscope found ${nesting.length} begin/end event(s) that do not nest`);
			for (const l of nesting.slice(0, 3))
				say(`  speedscope: ${l.slice(0, 300)}`);
		}

		// the Sandwich view: every profile, every name
		const clicked = await page.evaluate(() => {
			const tab = [...document.querySelectorAll('div')]
				.find(d => d.children.length <= 1 && d.textContent.trim().endsWith('Sandwich'));
			if (tab)
				tab.click();
			return !!tab;
		});
		if (!clicked)
			throw new Error('no Sandwich tab in the page');
		await page.evaluate(sandwichRows, '');
		const sandwichPng = job.png.replace(/(\.png)?$/, '.sandwich.png');
		await page.screenshot(sandwichPng);
		say(`screenshot of the Sandwich view: ${sandwichPng}`);

		const count = Number(state.title?.match(/\((\d+)\/(\d+)\)$/)?.[2] ?? 1);
		const opened = Number(state.title?.match(/\((\d+)\/(\d+)\)$/)?.[1] ?? 1);
		const openedOn = state.title ? state.title.replace(/\s*\(\d+\/\d+\)$/, '') : '(no name shown)';
		say(`opened on profile ${opened}/${count}: "${openedOn}"`);
		// back to the first profile, then through them all
		for (let index = opened - 1; index >= 1; index--) {
			await page.evaluate(() => window.dispatchEvent(new KeyboardEvent('keypress', { key: 'p' })));
			await page.waitFor(`profile ${index}/${count}`, s => s.title?.endsWith(`(${index}/${count})`));
		}
		const profiles = [];
		const found = new Map();
		const misses = new Map();
		for (let index = 1; index <= count; index++) {
			if (index > 1) {
				await page.evaluate(() => window.dispatchEvent(new KeyboardEvent('keypress', { key: 'n' })));
				await page.waitFor(`profile ${index}/${count}`, s => s.title?.endsWith(`(${index}/${count})`));
			}
			const title = (await page.evaluate(pageState)).title;
			profiles.push(title ? title.replace(/\s*\(\d+\/\d+\)$/, '') : '(no name shown)');
			for (const name of job.names) {
				if (/^(profile|first):/.test(name) || found.has(name))
					continue;
				await page.search(name);
				const r = await page.evaluate(sandwichRows, name);
				if (r.error)
					throw new Error(r.error);
				if (r.exact || r.withArgs)
					found.set(name, `"${(r.exact ? name : r.withArgs).slice(0, 120)}" in profile ${index}/${count}`);
				else
					misses.set(name, `${r.rows} row(s)` +
						(r.rows ? `: ${r.sample.map(s => `"${s.slice(0, 60)}"`).join(', ')}` : ''));
			}
		}
		say(`${count} profile(s): ${profiles.map(p => `"${p}"`).join(', ')}`);
		for (const name of job.names) {
			if (name.startsWith('first:')) {
				const part = name.slice('first:'.length);
				if (openedOn.includes(part)) {
					say(`opened on "${openedOn}", as wanted`);
				} else {
					say(`OPENED ON "${openedOn}", not on a profile named like "${part}"`);
					failures.push(`opened on "${openedOn}", not on "${part}"`);
				}
			} else if (name.startsWith('profile:')) {
				const part = name.slice('profile:'.length);
				const p = profiles.find(t => t.includes(part));
				if (p) {
					say(`found profile "${p}"`);
				} else {
					say(`MISSING profile:${part}`);
					failures.push(`no profile named like "${part}"`);
				}
			} else if (found.has(name)) {
				say(`found ${found.get(name)}${drawn.has(name) ? ', also drawn whole on the flame graph' : ''}`);
			} else {
				say(`MISSING ${name} (the search for it leaves ${misses.get(name)})`);
				failures.push(`"${name}" is in no profile's Sandwich table`);
			}
		}
		if (page.exceptions.length)
			say(`page exceptions: ${page.exceptions.slice(0, 3).join('; ')}`);
		if (failures.length)
			throw new CheckFailed(failures.join('; '));
	} finally {
		await page.close();
	}
}

// Ask Chromium to quit and give it a few seconds (cleanup() then kills
// whatever is left of its process group).
async function closeBrowser() {
	if (chrome.exitCode !== null || chrome.signalCode !== null)
		return;
	const exited = new Promise(resolve => chrome.once('exit', resolve));
	chrome.stdio[3].write(`${JSON.stringify({ id: ++lastId, method: 'Browser.close', params: {} })}\0`);
	await Promise.race([exited, sleep(5000)]);
}

let failed = 0;
try {
	const version = await send('Browser.getVersion');
	const release = fs.readFileSync(path.join(appDir, 'release.txt'), 'utf8').split('\n')[0];
	log(`${release} in ${version.product}, up in ${seconds()} s`);
	for (const [n, job] of jobs.entries()) {
		try {
			await runJob(job, n);
			log(`PASS ${job.file}`);
		} catch (e) {
			if (!(e instanceof CheckFailed))
				throw e;
			failed++;
			log(`FAIL ${job.file}: ${e.message}`);
		}
	}
} catch (e) {
	die(EXIT_ERROR, `ERROR: ${e.message} (after ${seconds()} s)`);
}
finished = true;
log(`${jobs.length - failed} of ${jobs.length} file(s) passed in ${seconds()} s`);
await closeBrowser();
cleanup();
process.exit(failed ? EXIT_FAILED : 0);
