# Writes table.md from the files of this folder and its two neighbours (run from the repository
# root): A, the answers before (the replays of ../migres_shorten_not_question/ for the 558
# questions, the whole runs of ../migres_scale_out_758/ for the 200 new ones); B, the same reader
# replayed with shorten_answer_type=true (replay_*.json here).
import json

from ragraphs.evaluation.paired import format_difference, paired_differences

R = 'bench/results'
O = f'{R}/migres_shorten_answer_type'
FILES = ['hotpotqa.dev', 'hotpotqa.extra.train', 'hotpotqa.train', '2wikimultihopqa.dev', '2wikimultihopqa.train',
         'musique.dev', 'musique.extra.train', 'musique.train']
M = ('em', 'f1', 'acc')


def replayed(path):
    return next(iter(json.load(open(path))['per_question'].values()))


def before(tag):
    try:
        return replayed(f'{R}/migres_shorten_not_question/replay_{tag}.json')
    except FileNotFoundError:
        rows = map(json.loads, open(f'{R}/migres_scale_out_758/{tag}.migres.jsonl'))
        return {r['id']: {'answer': r['prediction'], **{k: r[k] for k in M}} for r in rows}


questions = {}  # the questions' text, from the data files (../shared/data beside the repository)
for tag in FILES:
    path = f"../shared/data/{'' if tag.endswith('.dev') else 'train/'}{tag}.jsonl"
    for r in map(json.loads, open(path)):
        questions[str(r.get('_id', r.get('id')))] = (r['question'],)
lines = ['A: the answers before; B: shorten_answer_type=true. EM / F1 / accuracy (percent); B minus A with '
         'paired 95% bootstrap intervals.', '',
         '| file | n | answers changed | A | B |', '| --- | --- | --- | --- | --- |']
all_a, all_b, changed = [], [], []
for tag in FILES:
    a, b = before(tag), replayed(f'{O}/replay_{tag}.json')
    ids = sorted(b)
    ra = [{'id': i, **{k: a[i][k] for k in M}} for i in ids]
    rb = [{'id': i, **{k: b[i][k] for k in M}} for i in ids]
    all_a += ra
    all_b += rb
    diff = [i for i in ids if b[i]['answer'].strip() != a[i]['answer'].strip()]
    changed += [(tag, i, a[i], b[i]) for i in diff]
    f = lambda rs: ' / '.join('%.1f' % (100 * sum(x[k] for x in rs) / len(rs)) for k in M)  # noqa: E731
    lines.append(f'| {tag} | {len(ids)} | {len(diff)} | {f(ra)} | {f(rb)} |')
d = paired_differences(all_b, all_a, metrics=M)
lines += ['', f'All {len(all_a)}: B minus A ' + ' / '.join(format_difference(x) for x in d) + '.', '',
          '| file | question | A | B |', '| --- | --- | --- | --- |']
for tag, i, a, b in changed:
    q = questions.get(i, ('',))[0]
    cell = lambda x: f"{x['answer'][:90]!r} ({x['em']:.0f} / {x['f1']:.2f} / {x['acc']:.0f})"  # noqa: E731
    lines.append(f'| {tag} | {q[:80] or i} | {cell(a)} | {cell(b)} |')
print('\n'.join(lines))
