// `homeclaw doctor [--config FILE] [--json]`: runs the checks and prints one line per check, each
// failure followed by its fix. Exit code 0 when nothing failed, 1 otherwise.
import type { Command } from 'commander';
import type { DoctorCheck } from '../observability/doctor-checks.js';
import { runDoctor, type DoctorReport } from '../observability/doctor.js';

const LABEL: Record<DoctorCheck['status'], string> = { pass: 'ok', fail: 'FAIL', skip: 'skip' };

export function formatDoctorReport(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((check) => check.name.length));
  const lines: string[] = [];
  for (const check of report.checks) {
    const [first, ...rest] = check.detail.split('\n');
    lines.push(`${LABEL[check.status].padEnd(4)}  ${check.name.padEnd(width)}  ${first ?? ''}`);
    for (const line of rest) lines.push(`${' '.repeat(width + 8)}${line.trimStart()}`);
    if (check.fix) lines.push(`${' '.repeat(width + 8)}fix: ${check.fix}`);
  }
  const failed = report.checks.filter((check) => check.status === 'fail').length;
  lines.push('', failed === 0 ? 'All checks passed.' : `${failed} check${failed === 1 ? '' : 's'} failed.`);
  return lines.join('\n');
}

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('check that homeclaw start can run here and reach what it is configured to use; exit 1 on any failure')
    .option('-c, --config <file>', 'YAML config file (default: embedded defaults + environment)')
    .option('--json', 'print the report as JSON')
    .action(async (options: { config?: string; json?: boolean }) => {
      const report = await runDoctor(options.config ? { file: options.config } : {});
      process.stdout.write(`${options.json ? JSON.stringify(report, null, 2) : formatDoctorReport(report)}\n`);
      process.exitCode = report.ok ? 0 : 1;
    });
}
