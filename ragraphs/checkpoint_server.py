"""The checkpointers a LangGraph server gets from :func:`ragraphs.checkpoint.server_checkpointer`:
LangGraph's SQLite and PostgreSQL savers with ``adelete_for_runs``, which the server calls to
take a cancelled run's checkpoints out of its thread (double-texting's ``rollback``, a cancel with
``action="rollback"``). Without it (until 2026-12-03) the server's worker failed with a
RuntimeError, the second run was an HTTP 500 and the thread stayed busy for good.

A run's checkpoints are those whose metadata names its ``run_id`` (as the server's own
in-memory checkpointer finds them); their pending writes go with them. Checkpoint blobs, which
PostgreSQL shares between a thread's checkpoints by channel version, are kept.
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver


class ServerSqliteSaver(AsyncSqliteSaver):
    """:class:`AsyncSqliteSaver` with ``adelete_for_runs``."""

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        ids = [str(r) for r in run_ids]
        if not ids:
            return
        marks = ", ".join("?" * len(ids))
        async with self.lock, self.conn.cursor() as cur:
            await cur.execute("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints WHERE "
                              f"json_extract(CAST(metadata AS TEXT), '$.run_id') IN ({marks})", ids)
            keys = [tuple(row) for row in await cur.fetchall()]
            for table in ("writes", "checkpoints"):
                await cur.executemany(f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                                      keys)
            await self.conn.commit()


@functools.cache
def server_postgres_saver() -> Any:
    """:class:`AsyncPostgresSaver` with ``adelete_for_runs`` (the class, made once, when the
    ``[postgres]`` extra is there). Not run here: no PostgreSQL server on this machine."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    class ServerPostgresSaver(AsyncPostgresSaver):
        async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
            ids = [str(r) for r in run_ids]
            if not ids:
                return
            async with self._cursor(pipeline=True) as cur:
                await cur.execute("DELETE FROM checkpoint_writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN "
                                  "(SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints "
                                  "WHERE metadata->>'run_id' = ANY(%s))", (ids,))
                await cur.execute("DELETE FROM checkpoints WHERE metadata->>'run_id' = ANY(%s)", (ids,))

    return ServerPostgresSaver
