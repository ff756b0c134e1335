"""The memory domain: session store, DAG views, workspace, archive, topics, transactions and the write.

Mostly synchronous and free of event-loop code, so the actors, the simulator and the CLI share it.
"""
