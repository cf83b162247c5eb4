"""Click logs: UBI behaviour data in, click models over it, judgements and query samples out."""
