"""`manage.py verify_transcripts`: check the coordinator transcript's hash chain, every turn of
every conversation; one line per broken turn (naming its conversation and user), exit 1 if any."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from orchestrator.coordinator.transcript import transcript_breaks
from orchestrator.models import CoordinatorTurn


class Command(BaseCommand):
    help = "Verify the coordinator transcripts' hash chain; exits non-zero when any turn is broken."

    def handle(self, *args: Any, **options: Any) -> None:
        breaks = list(transcript_breaks())
        for broken in breaks:
            self.stderr.write(broken.line())
        turns = CoordinatorTurn.objects.count()
        if breaks:
            conversations = len({(b.user_id, b.conversation) for b in breaks})
            raise CommandError(
                f"Transcript chain broken: {len(breaks)} broken turn(s) in {conversations} conversation(s)"
                f" of {turns} turns."
            )
        conversations = CoordinatorTurn.objects.values("user_id", "conversation").distinct().count()
        self.stdout.write(self.style.SUCCESS(f"Transcripts OK ({turns} turns, {conversations} conversations)."))
