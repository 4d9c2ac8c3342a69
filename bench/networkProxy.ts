/**
 * The process that holds the proxies in the network bench, as the daemon holds its sessions':
 * `node dist/bench/networkProxy.js CONFIG_JSON` starts one proxy per socket path with the same
 * policy and names, prints `ready` and runs until its stdin closes. Apart from the bench process,
 * so the servers and clients there do not share its event loop, and its memory is its own.
 */
import { compilePolicy, startEgressProxy, type NetworkSetting } from "../src/network/index.js";
import { mapResolver } from "../test/network/support.js";

export interface ProxyHostConfig {
  readonly socketPaths: readonly string[];
  readonly policy: NetworkSetting;
  readonly names: Readonly<Record<string, string>>;
}

const config = JSON.parse(process.argv[2] ?? "{}") as ProxyHostConfig;
const policy = compilePolicy(config.policy);
const proxies = await Promise.all(
  config.socketPaths.map((socketPath) => startEgressProxy({ socketPath, policy: () => policy, onRecord: () => undefined, resolver: mapResolver(config.names) })),
);
process.stdout.write("ready\n");
process.stdin.resume();
process.stdin.on("end", () => void Promise.all(proxies.map((proxy) => proxy.close())).then(() => process.exit(0)));
