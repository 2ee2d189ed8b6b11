# Writes table.md from the replay files here and the recorded runs (run from the repository root).
# Recorded: the whole MIGRES runs with today's defaults (A); replayed: the same reader with
# shorten_not_question=true (B); vanilla: the same questions.
import json
from ragraphs.evaluation.paired import format_difference, paired_differences
from ragraphs.prompts import restates_question
O = 'bench/results/migres_shorten_not_question'
B = 'top+later:nostatements+noknowledge+topchars=1200'
RUNS = {  # name: (replay tag, migres dir, vanilla dir)
    'HotpotQA dev': ('hotpotqa.dev', 'runs/qp/hotpotqa.dev/runs/hotpotqa'),
    'HotpotQA other': ('hotpotqa.extra.train', 'runs/qp/hotpotqa.extra.train/runs/hotpotqa'),
    '2Wiki dev': ('2wikimultihopqa.dev', 'runs/qp/2wikimultihopqa.dev/runs/2wikimultihopqa'),
    '2Wiki other': ('2wikimultihopqa.train', 'runs/qp/2wikimultihopqa.train/runs/2wikimultihopqa'),
    'MuSiQue dev': ('musique.dev', 'runs/mq/musique/runs/musique'),
    'MuSiQue other': ('musique.extra.train', 'runs/qp/musique.extra.train/runs/musique'),
}
M = ('em', 'f1', 'acc')


def recs(path):
    return {r['id']: r for r in map(json.loads, open(path))}


groups, changed = {}, {}
for name, (tag, d) in RUNS.items():
    rep = json.load(open(f'{O}/replay_{tag}.json'))
    b = rep['per_question'][B]
    a, v = recs(f'{d}/migres/results.jsonl'), recs(f'{d}/vanilla/results.jsonl')
    ids = sorted(b)
    groups[name] = ([{'id': i, **{k: a[i][k] for k in M}} for i in ids], [{'id': i, **{k: b[i][k] for k in M}} for i in ids],
                    [{'id': i, **{k: v[i][k] for k in M}} for i in ids])
    diff = [i for i in ids if b[i]['answer'].strip() != (a[i]['prediction'] or '').strip()]
    restating = [i for i in ids if restates_question(a[i]['question'], a[i]['prediction'] or '')]
    changed[name] = (len(ids), len(diff), len(restating), sum(i in restating for i in diff),
                     [(a[i]['question'], a[i]['prediction'], b[i]['answer'], a[i]['gold'][0]) for i in diff])


def fmt(rs, k):
    return '%.1f' % (100 * sum(x[k] for x in rs) / len(rs))


def show(name, keys):
    a, b, v = (sum((groups[k][j] for k in keys), []) for j in range(3))
    ba, bv, av = (paired_differences(x, y, metrics=M) for x, y in ((b, a), (b, v), (a, v)))
    cells = [' / '.join(fmt(rs, k) for k in M) for rs in (v, a, b)]
    cells += [' / '.join(format_difference(d) for d in ds) for ds in (ba, bv, av)]
    print(f"| {name} | {len(a)} | " + ' | '.join(cells) + ' |')


print('EM / F1 / accuracy; paired 95% bootstrap intervals.\n')
print('| questions | n | vanilla | A: today (recorded) | B: shorten_not_question | B minus A | B minus vanilla | A minus vanilla |')
print('| --- | --- | --- | --- | --- | --- | --- | --- |')
for name in RUNS:
    show(name, [name])
for ds in ('HotpotQA', '2Wiki', 'MuSiQue'):
    show(f'{ds} dev + other', [f'{ds} dev', f'{ds} other'])
show('dev files', [n for n in RUNS if n.endswith('dev')])
show('other questions', [n for n in RUNS if n.endswith('other')])
show('all', list(RUNS))
print('\n| questions | n | answers changed | recorded answers that restate the question | of them changed |')
print('| --- | --- | --- | --- | --- |')
for name, (n, nd, nr, both) in ((k, v[:4]) for k, v in changed.items()):
    print(f'| {name} | {n} | {nd} | {nr} | {both} |')
print('\nEvery changed answer (question | recorded | now | first gold answer):\n')
for name, v in changed.items():
    for q, p, now, g in v[4]:
        print(f'- {name}: {q} | {p!r} -> {now!r} | {g!r}')
