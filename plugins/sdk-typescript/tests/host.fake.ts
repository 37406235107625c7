// What the host lends a plugin, faked for tests that run the SDK's exports under Node: every
// `agent-host:plugin/*` import the SDK calls is aliased to this module (scripts/test.sh), which
// answers from memory and records the log.

export const logged: { level: string; message: string }[] = [];
const bag = new Map<string, string>();

export function write(level: string, message: string): void {
  logged.push({ level, message });
}
export function get(key: string): string | undefined {
  return bag.get(key);
}
export function set(key: string, value: string): void {
  bag.set(key, value);
}
export function remove(key: string): void {
  bag.delete(key);
}
export function read(): never {
  throw new Error("not faked");
}
export function emit(): void {}
export function declare(): void {}
export function untilStateChanges(): void {}
export function session(): never {
  throw new Error("not faked");
}
export function complete(): never {
  throw new Error("not faked");
}
export function run(): never {
  throw new Error("not faked");
}
