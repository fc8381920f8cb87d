// Signals a child spawned with `detached: true` and every process it started (its process group).
import type { ChildProcess } from 'node:child_process';

export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}
