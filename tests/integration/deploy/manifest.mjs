// Offline checks of deploy/daemonset.yaml, and the runc configuration that
// runs the collector's image the way the manifest says (test_deploy.sh).
//
//   node manifest.mjs validate NPM_DIR MANIFEST
//       every object against the Kubernetes API schema (kubernetes-models),
//       then what deploy/README.md promises of it; prints the DaemonSet's
//       container as JSON
//   node manifest.mjs runc NPM_DIR MANIFEST BASE_CONFIG SETTINGS_JSON
//       BASE_CONFIG (from `runc spec`) with the manifest's capabilities,
//       securityContext, mounts and limits; SETTINGS_JSON gives the rootfs,
//       the entrypoint, the node name, the args to change, the hostPath
//       directories to substitute and the directories standing for Secrets
//       (secrets: {name: dir}); prints config.json
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [cmd, npmDir, manifestPath, ...rest] = process.argv.slice(2);
const mod = (name) => import(pathToFileURL(path.join(npmDir, "node_modules", name)).href);
const yaml = (await mod("js-yaml/index.js")).default;
const docs = yaml.loadAll(readFileSync(manifestPath, "utf8")).filter(Boolean);

const problems = [];
const want = (ok, what) => {
	if (!ok) problems.push(what);
};

async function validate() {
	for (const doc of docs) {
		const [group, version] = doc.apiVersion.includes("/")
			? doc.apiVersion.split("/")
			: [null, doc.apiVersion];
		const file = `kubernetes-models/${group ? group + "/" : ""}${version}/${doc.kind}.js`;
		const Model = (await mod(file))[doc.kind];
		try {
			new Model(doc).validate();
			console.error(`valid: ${doc.apiVersion} ${doc.kind} ${doc.metadata.name}`);
		} catch (e) {
			problems.push(`${doc.kind} ${doc.metadata?.name}: ${e.message}`);
		}
	}
}

function daemonSet() {
	const ds = docs.find((d) => d.kind === "DaemonSet");
	if (!ds) throw new Error("no DaemonSet in " + manifestPath);
	return ds;
}

function promises(ds) {
	const pod = ds.spec.template.spec;
	const c = pod.containers[0];
	const sc = c.securityContext || {};
	const sa = docs.find((d) => d.kind === "ServiceAccount" && d.metadata.name === pod.serviceAccountName);
	want(sa, `a ServiceAccount named ${pod.serviceAccountName} in the manifest`);
	want(sa && sa.automountServiceAccountToken === false, "the ServiceAccount mounts no token");
	want(pod.automountServiceAccountToken === false, "the pod mounts no token");
	want(pod.hostPID === true, "hostPID");
	want(!pod.hostNetwork, "no hostNetwork");
	want(pod.priorityClassName === "system-node-critical", "priorityClassName system-node-critical");
	want(pod.nodeSelector?.["kubernetes.io/os"] === "linux", "nodeSelector kubernetes.io/os: linux");
	want(pod.nodeSelector?.["kubernetes.io/arch"], "nodeSelector kubernetes.io/arch");
	want(ds.spec.updateStrategy?.type === "RollingUpdate", "updateStrategy RollingUpdate");
	want(sc.allowPrivilegeEscalation === false, "allowPrivilegeEscalation: false");
	want(sc.readOnlyRootFilesystem === true, "readOnlyRootFilesystem: true");
	want(!sc.privileged, "not privileged");
	want(JSON.stringify(sc.capabilities?.drop) === '["ALL"]', "capabilities drop [ALL]");
	for (const cap of sc.capabilities?.add || [])
		want(!["SYS_ADMIN", "SYS_RESOURCE", "NET_ADMIN", "SYS_MODULE"].includes(cap),
			`no ${cap} in capabilities.add`);
	want(["RuntimeDefault", "Localhost"].includes(sc.seccompProfile?.type), "a seccomp profile");
	const port = c.ports?.find((p) => p.name === "metrics")?.containerPort;
	const healthPort = c.ports?.find((p) => p.name === "health")?.containerPort;
	for (const p of ["startupProbe", "livenessProbe", "readinessProbe"])
		want(c[p]?.httpGet?.path === "/healthz" && c[p]?.httpGet?.port === "health",
			`${p} on /healthz of the health port`);
	const ann = ds.spec.template.metadata.annotations || {};
	want(port && ann["prometheus.io/scrape"] === "true" && ann["prometheus.io/port"] === String(port),
		"the metrics port with scrape annotations");
	want(c.args.join(" ").includes(`--metrics-addr :${port}`), "--metrics-addr on the metrics port");
	want(healthPort && healthPort !== port && c.args.join(" ").includes(`--health-addr :${healthPort}`),
		"--health-addr on a health port of its own");
	want(c.resources?.requests?.cpu && c.resources?.requests?.memory && c.resources?.limits?.memory,
		"requests and a memory limit");
	want(c.env?.some((e) => e.name === "NODE_NAME" && e.valueFrom?.fieldRef?.fieldPath === "spec.nodeName"),
		"NODE_NAME from spec.nodeName");
	const mounts = Object.fromEntries((c.volumeMounts || []).map((m) => [m.mountPath, m]));
	for (const p of ["/sys/kernel/btf", "/var/log/pods", "/var/log/containers"])
		want(mounts[p]?.readOnly === true, `${p} mounted read-only`);
	want(mounts["/var/lib/ctxprof"] && !mounts["/var/lib/ctxprof"].readOnly, "the output directory");
	want(!mounts["/sys/kernel/debug"], "no debugfs mount (not needed)");
	// profiles leave the node: scraped where Alloy and Parca look, pushed from a Secret
	want(ann["profiles.grafana.com/cpu.scrape"] === "true" &&
		ann["profiles.grafana.com/cpu.port"] === String(port) &&
		ann["profiles.grafana.com/cpu.path"] === "/debug/pprof/profile",
	"profiles.grafana.com/cpu.{scrape,port,path} annotations on the metrics port");
	want(ann["parca.dev/scrape"] === "true" && ann["parca.dev/port"] === String(port),
		"parca.dev/{scrape,port} annotations on the metrics port");
	const i = c.args.indexOf("--push-config");
	const mount = i >= 0 && mounts[c.args[i + 1]];
	const vol = mount && pod.volumes.find((v) => v.name === mount.name);
	want(vol?.secret?.optional === true && mount.readOnly === true,
		"--push-config reads an optional Secret, mounted read-only");
}

/* "512Mi" -> bytes, "500m" -> CPUs */
function bytes(q) {
	const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(q);
	return Number(m[1]) * { Ki: 1024, Mi: 1 << 20, Gi: 1 << 30 }[m[2] || ""] || Number(m[1]);
}
function cpus(q) {
	return q.endsWith("m") ? Number(q.slice(0, -1)) / 1000 : Number(q);
}

function runcConfig(ds, base, s) {
	const pod = ds.spec.template.spec;
	const c = pod.containers[0];
	const sc = c.securityContext;
	const vols = Object.fromEntries(pod.volumes.map((v) => [v.name, v]));
	const caps = sc.capabilities.add.map((x) => "CAP_" + x);
	let args = [...c.args];
	for (const [opt, value] of Object.entries(s.args || {})) {
		const i = args.indexOf(opt);
		if (i < 0) args.push(opt, value);
		else args[i + 1] = value;
	}
	const cfg = structuredClone(base);
	cfg.process.terminal = false;
	cfg.process.args = [...s.entrypoint, ...args];
	cfg.process.user = { uid: sc.runAsUser ?? 0, gid: 0 };
	cfg.process.env = [
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		...c.env.map((e) => `${e.name}=${e.value ?? (e.valueFrom?.fieldRef?.fieldPath === "spec.nodeName" ? s.node : "")}`),
	];
	// what containerd and CRI-O give a root container with drop ALL + add
	cfg.process.capabilities = { bounding: caps, effective: caps, permitted: caps, inheritable: [], ambient: [] };
	cfg.process.noNewPrivileges = sc.allowPrivilegeEscalation === false;
	delete cfg.process.rlimits; // the runtime's defaults, as in a pod
	cfg.root = { path: s.rootfs, readonly: sc.readOnlyRootFilesystem === true };
	cfg.hostname = s.node;
	// hostPID: the host's pid namespace; the host's network, so the test scrapes loopback
	cfg.linux.namespaces = cfg.linux.namespaces.filter((n) => !["pid", "network"].includes(n.type) ||
		(n.type === "pid" && !pod.hostPID));
	if (sc.seccompProfile.type === "Localhost")
		cfg.linux.seccomp = JSON.parse(readFileSync(path.join(s.seccompDir, path.basename(sc.seccompProfile.localhostProfile)), "utf8"));
	for (const m of c.volumeMounts) {
		// a Secret: the directory the test gives for it, else none (an optional
		// Secret not created: its files are absent)
		if (vols[m.name].secret) {
			const dir = s.secrets?.[vols[m.name].secret.secretName];
			if (dir)
				cfg.mounts.push({ destination: m.mountPath, type: "bind", source: dir,
					options: ["rbind", "ro", "nosuid", "nodev"] });
			continue;
		}
		const hp = vols[m.name].hostPath.path;
		cfg.mounts.push({
			destination: m.mountPath, type: "bind", source: s.hostPaths?.[hp] ?? hp,
			options: ["rbind", m.readOnly ? "ro" : "rw", "nosuid", "nodev"],
		});
	}
	const lim = c.resources.limits;
	cfg.linux.resources = {
		...cfg.linux.resources,
		memory: { limit: bytes(lim.memory) },
		...(lim.cpu ? { cpu: { quota: Math.round(cpus(lim.cpu) * 100000), period: 100000 } } : {}),
	};
	return cfg;
}

if (cmd === "validate") {
	await validate();
	promises(daemonSet());
} else if (cmd === "runc") {
	const [baseFile, settings] = rest;
	const cfg = runcConfig(daemonSet(), JSON.parse(readFileSync(baseFile, "utf8")), JSON.parse(settings));
	console.log(JSON.stringify(cfg, null, 1));
} else {
	problems.push(`unknown command ${cmd}`);
}
if (problems.length) {
	for (const p of problems) console.error("manifest: " + p);
	process.exit(1);
}
if (cmd === "validate") console.log(JSON.stringify(daemonSet().spec.template.spec.containers[0]));
