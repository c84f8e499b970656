"""``python -m chainsum``."""

from .cli import main

main()
