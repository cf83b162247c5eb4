"""The job kernel: the queue (procrastinate), tasks and hooks; it knows no domain."""
