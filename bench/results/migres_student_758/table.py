# Writes table.md and student_vs_before.png from the files of this folder and its neighbours (run
# from the repository root): S, MIGRES with the judge shipped on 2026-11-28 (the student; whole
# runs, `*.migres.jsonl` here); J, the judge of 2026-11-27 with the same defaults (the replays of
# ../migres_shorten_answer_type/, which its whole runs reproduced); V, vanilla (`*.vanilla.jsonl`
# here, the recorded runs of the same questions; vanilla reads no judge).
import json

from ragraphs.evaluation.paired import format_difference, paired_differences

R = 'bench/results'
O = f'{R}/migres_student_758'
DATASETS = {'HotpotQA': ['hotpotqa.dev', 'hotpotqa.extra.train', 'hotpotqa.train'],
            '2Wiki': ['2wikimultihopqa.dev', '2wikimultihopqa.train'],
            'MuSiQue': ['musique.dev', 'musique.extra.train', 'musique.train']}
M = ('em', 'f1', 'acc')


def rows(path):
    return {r['id']: r for r in map(json.loads, open(path))}


def before(tag):
    per = next(iter(json.load(open(f'{R}/migres_shorten_answer_type/replay_{tag}.json'))['per_question'].values()))
    return {i: {'id': i, **{k: v[k] for k in M}} for i, v in per.items()}


def pct(rs):
    return ' / '.join('%.1f' % (100 * sum(x[k] for x in rs) / len(rs)) for k in M)


def diff(a, b):
    return ' / '.join(format_difference(x) for x in paired_differences(a, b, metrics=M))


lines = ['EM / F1 / accuracy (percent); differences paired by question with 95% bootstrap intervals '
         '(`*`: the interval excludes 0).', '',
         '| questions | n | V | J | S | S minus V | J minus V | S minus J | S: LLM calls, guard stops, parse failures |',
         '| --- | --- | --- | --- | --- | --- | --- | --- | --- |']
pooled = {'V': [], 'J': [], 'S': []}
forest = []
for name, tags in DATASETS.items():
    group = {'V': [], 'J': [], 'S': []}
    for tag in tags:
        s, v, j = rows(f'{O}/{tag}.migres.jsonl'), rows(f'{O}/{tag}.vanilla.jsonl'), before(tag)
        ids = sorted(s)
        assert set(ids) == set(v) == set(j), tag
        sv, vv, jv = [s[i] for i in ids], [v[i] for i in ids], [j[i] for i in ids]
        calls = sum(r.get('llm_calls', 0) for r in sv) / len(sv)
        guard = sum(r.get('ended') == 'guard' for r in sv)
        fails = sum(r.get('parse_failures', 0) for r in sv)
        lines.append(f'| {tag} | {len(ids)} | {pct(vv)} | {pct(jv)} | {pct(sv)} | {diff(sv, vv)} | {diff(jv, vv)} | '
                     f'{diff(sv, jv)} | {calls:.2f}, {guard}, {fails} |')
        for k, x in (('V', vv), ('J', jv), ('S', sv)):
            group[k] += x
    lines.append(f"| **{name}** | {len(group['S'])} | {pct(group['V'])} | {pct(group['J'])} | {pct(group['S'])} | "
                 f"{diff(group['S'], group['V'])} | {diff(group['J'], group['V'])} | {diff(group['S'], group['J'])} | |")
    forest.append((name, group))
    for k in pooled:
        pooled[k] += group[k]
lines.append(f"| **all** | {len(pooled['S'])} | {pct(pooled['V'])} | {pct(pooled['J'])} | {pct(pooled['S'])} | "
             f"{diff(pooled['S'], pooled['V'])} | {diff(pooled['J'], pooled['V'])} | {diff(pooled['S'], pooled['J'])} | |")
forest.append(('all', pooled))
open(f'{O}/table.md', 'w').write('\n'.join(lines) + '\n')
print('\n'.join(lines))

import matplotlib  # noqa: E402

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

fig, axes = plt.subplots(1, 2, figsize=(9, 3.9), sharey=True)
for ax, metric in zip(axes, ('em', 'f1')):
    for y, (name, g) in enumerate(reversed(forest)):
        for dy, (label, key, colour) in ((0.15, ('judge of 2026-11-27', 'J', 'tab:gray')),
                                         (-0.15, ('student (shipped)', 'S', 'tab:blue'))):
            d = paired_differences(g[key], g['V'], metrics=(metric,))[0]
            ax.errorbar(100 * d.mean, y + dy, xerr=[[100 * (d.mean - d.low)], [100 * (d.high - d.mean)]],
                        fmt='o', color=colour, capsize=3, label=label if (y == 0 and ax is axes[1]) else None)
    ax.axvline(0, color='k', lw=0.8)
    ax.set_yticks(range(len(forest)), [f"{n} (n = {len(g['S'])})" for n, g in reversed(forest)])
    ax.set_xlabel(f'MIGRES minus vanilla, {metric.upper()} (points, 95% CI)')
fig.legend(*axes[1].get_legend_handles_labels(), loc='lower center', ncol=2, fontsize=8)
fig.suptitle('MIGRES against vanilla over 758 questions, by judge (Gemma 3 270M reader)', fontsize=10)
fig.tight_layout(rect=(0, 0.07, 1, 1))
fig.savefig(f'{O}/student_vs_before.png', dpi=110)
