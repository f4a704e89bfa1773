// Where a race's or a collaboration's agents and checks run, when hydra.toml
// gives a choice (hydra/agents' `executors`: the default first; more than one
// only when [executor] prepares Slurm). No VS Code imports: the unit tests
// run it under plain Node.

export interface ExecutorItem {
  label: string;
  description: string;
  detail: string;
  executor: string;
}

const WHAT: Record<string, string> = {
  local: 'child processes of hydra on this machine',
  slurm: 'each agent run, setup and check a Slurm batch job, on a node of the cluster',
};

/** The quick pick's items, the default first; undefined when there is nothing to choose (one executor, or an older hydra). */
export function executorItems(executors: string[] | undefined): ExecutorItem[] | undefined {
  if (!executors || executors.length < 2) return undefined;
  return executors.map((executor, i) => ({
    label: executor,
    description: i === 0 ? 'default ([executor] kind)' : '',
    detail: WHAT[executor] ?? '',
    executor,
  }));
}
