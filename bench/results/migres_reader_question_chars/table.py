# Writes table.md from the replay files here and the vanilla runs (run from the repository root).
import json
from ragraphs.evaluation.paired import format_difference, paired_differences
O='bench/results/migres_reader_question_chars'
A='top+later:nostatements+noknowledge'; B=A+'+topchars=1200'
van={'dev':'runs/mq27/{d}/runs/{d}/vanilla/results.jsonl','other':'runs/ns/{d}/runs/{d}/vanilla/results.jsonl'}
def recs(path): return [json.loads(l) for l in open(path)]
groups={}
for d in ['hotpotqa','2wikimultihopqa','musique']:
    for s in ['dev','other']:
        r=json.load(open(f'{O}/replay_{s}_{d}.json'))['per_question']
        a=[{'id':i,**x} for i,x in r[A].items()]; b=[{'id':i,**x} for i,x in r[B].items()]
        v=recs(van[s].format(d=d))
        groups[(d,s)]=(a,b,v)
def show(name, keys):
    a=sum((groups[k][0] for k in keys),[]); b=sum((groups[k][1] for k in keys),[]); v=sum((groups[k][2] for k in keys),[])
    ba=paired_differences(b,a,metrics=('em','f1','acc')); bv=paired_differences(b,v,metrics=('em','f1','acc')); av=paired_differences(a,v,metrics=('em','f1','acc'))
    mean=lambda rs,k: 100*sum(x[k] for x in rs)/len(rs)
    print(f"| {name} | {len(a)} | " + " / ".join('%.1f'%mean(a,k) for k in ('em','f1','acc')) + " | " + " / ".join('%.1f'%mean(b,k) for k in ('em','f1','acc')) + " | " + " / ".join(format_difference(d) for d in ba) + " | " + " / ".join(format_difference(d) for d in bv) + " | " + " / ".join(format_difference(d) for d in av) + " |")
print("| questions | n | A: today's reader | B: the question's passages at 1,200 | B minus A | B minus vanilla | A minus vanilla |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for d in ['hotpotqa','2wikimultihopqa','musique']:
    for s in ['dev','other']: show(f'{d} {s}', [(d,s)])
for d in ['hotpotqa','2wikimultihopqa','musique']: show(f'{d} both', [(d,'dev'),(d,'other')])
show('dev files', [(d,'dev') for d in ['hotpotqa','2wikimultihopqa','musique']])
show('other questions', [(d,'other') for d in ['hotpotqa','2wikimultihopqa','musique']])
show('all', list(groups))
