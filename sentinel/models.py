"""The plant (site → line → cell), its signals, samples, latest values and alarms."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from sentinel.choices import OPEN_ALARM_STATES, AlarmState, Direction, Severity


class Site(models.Model):
    name = models.CharField(max_length=100, unique=True)

    def __str__(self) -> str:
        return self.name


class Line(models.Model):
    site = models.ForeignKey(Site, on_delete=models.CASCADE, related_name="lines")
    name = models.CharField(max_length=100)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["site", "name"], name="line_unique_name_per_site")]

    def __str__(self) -> str:
        return f"{self.site} / {self.name}"


class Cell(models.Model):
    """A piece of equipment: a pump, compressor, conveyor, press."""

    line = models.ForeignKey(Line, on_delete=models.CASCADE, related_name="cells")
    tag = models.CharField(max_length=32, unique=True, help_text="Plant tag, e.g. P-02.")
    name = models.CharField(max_length=100)
    equipment_type = models.CharField(max_length=50, blank=True)
    onboarding_complete = models.BooleanField(default=False)

    class Meta:
        ordering = ["tag"]

    def __str__(self) -> str:
        return f"{self.tag} {self.name}"


# A cell's scan bucket spreads cell ids over SCAN_BUCKETS (an odd multiplier is a bijection mod 1024,
# so consecutive cells land far apart); scan group i of N is the i-th of N equal bucket ranges, so
# changing ARIA_SCAN_GROUPS never rewrites a row (sentinel/services/scan.py).
SCAN_BUCKETS = 1024
SCAN_BUCKET_SPREAD = 633


class SignalDefinition(models.Model):
    cell = models.ForeignKey(Cell, on_delete=models.CASCADE, related_name="signals")
    key = models.CharField(max_length=64, help_text="Machine name, e.g. vibration_mm_s.")
    display_name = models.CharField(max_length=100)
    unit = models.CharField(max_length=20, blank=True)
    enabled = models.BooleanField(default=True)
    low_alert = models.FloatField(null=True, blank=True)
    alert = models.FloatField(null=True, blank=True)
    high_alert = models.FloatField(null=True, blank=True)
    trip = models.FloatField(null=True, blank=True)
    deadband = models.FloatField(default=0.0)
    on_delay_seconds = models.PositiveIntegerField(default=0)
    scan_bucket = models.GeneratedField(
        expression=F("cell_id") % SCAN_BUCKETS * SCAN_BUCKET_SPREAD % SCAN_BUCKETS,
        output_field=models.PositiveSmallIntegerField(),
        db_persist=True,
        db_index=True,
        help_text="The cell's scan bucket (from its cell id), kept by the database.",
    )

    class Meta:
        ordering = ["cell_id", "key"]
        constraints = [models.UniqueConstraint(fields=["cell", "key"], name="signal_unique_key_per_cell")]

    def __str__(self) -> str:
        return f"{self.cell.tag}.{self.key}"


class SignalSample(models.Model):
    """Raw history. One value per signal and instant: a retried or repeated sample is stored once
    (ingest inserts with ON CONFLICT DO NOTHING); the key also serves time-range reads. On
    PostgreSQL the table is partitioned by `time` (sentinel/history/partitions.py)."""

    pk = models.CompositePrimaryKey("signal", "time")
    signal = models.ForeignKey(SignalDefinition, on_delete=models.CASCADE, related_name="samples")
    time = models.DateTimeField()
    value = models.FloatField()


class SignalLatest(models.Model):
    """The latest value of each signal, kept current on ingest so a scan never sorts history."""

    signal = models.OneToOneField(SignalDefinition, on_delete=models.CASCADE, primary_key=True, related_name="latest")
    time = models.DateTimeField()
    value = models.FloatField()
    # When the current breach began (for on-delay), and whether the signal is stale.
    breach_since = models.DateTimeField(null=True, blank=True)
    stale = models.BooleanField(default=False)
    # A copy of the signal's scan bucket, so a scan group reads only its rows of this table: NULL
    # until a group scan stamps it (ingest does not write it), followed by a trigger when a signal
    # moves to another cell (migration 0007).
    scan_bucket = models.PositiveSmallIntegerField(null=True, blank=True, editable=False, db_index=True)


class Alarm(models.Model):
    signal = models.ForeignKey(SignalDefinition, on_delete=models.CASCADE, related_name="alarms")
    state = models.CharField(max_length=20, choices=AlarmState.choices, default=AlarmState.ACTIVE_UNACK, db_index=True)
    severity = models.CharField(max_length=8, choices=Severity.choices)
    direction = models.CharField(max_length=8, choices=Direction.choices)
    threshold_field = models.CharField(max_length=16)
    threshold_value = models.FloatField()
    value = models.FloatField(help_text="Value that raised (or last escalated) the alarm.")
    peak_value = models.FloatField()
    raised_at = models.DateTimeField()
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    acknowledge_comment = models.CharField(max_length=500, blank=True)
    shelved_until = models.DateTimeField(null=True, blank=True)
    shelved_until_work_order_closes = models.BooleanField(default=False)
    state_before_shelve = models.CharField(max_length=20, blank=True)
    cleared_at = models.DateTimeField(null=True, blank=True)
    # Chattering (sentinel/services/chatter.py): the alarm clears only once its value has stayed
    # inside the band for the clear-delay; `clear_since` is when the current clear stretch began.
    chattering = models.BooleanField(default=False)
    clear_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-raised_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["signal"], condition=Q(state__in=OPEN_ALARM_STATES), name="alarm_one_open_per_signal"
            )
        ]

    def __str__(self) -> str:
        return f"Alarm #{self.pk} {self.signal} {self.severity} ({self.state})"


class AlarmEvent(models.Model):
    """Append-only history of an alarm's transitions."""

    alarm = models.ForeignKey(Alarm, on_delete=models.CASCADE, related_name="events")
    from_state = models.CharField(max_length=20, blank=True)
    to_state = models.CharField(max_length=20)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    comment = models.CharField(max_length=500, blank=True)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]


class StaleCondition(models.Model):
    """A signal that stopped reporting (no sample for 3 scan intervals)."""

    signal = models.ForeignKey(SignalDefinition, on_delete=models.CASCADE, related_name="stale_conditions")
    raised_at = models.DateTimeField()
    cleared_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["signal"], condition=Q(cleared_at__isnull=True), name="stale_one_open_per_signal"
            )
        ]


class IngestBatch(models.Model):
    """A sample batch posted with an `Idempotency-Key`: a retry of it is answered with this
    response instead of being stored again (one row per caller and key)."""

    key = models.CharField(max_length=200)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the request body.")
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="ingest_batch_one_per_user_key")]


class Connector(models.Model):
    """A link to a plant data source (MQTT broker, OPC UA server) run by `manage.py run_connectors`.

    Credentials are never stored: `username_env` / `password_env` name environment variables of
    the connectors process. The status fields are written by the running connector."""

    class Kind(models.TextChoices):
        MQTT_JSON = "mqtt_json", "MQTT (JSON topics)"
        MQTT_SPARKPLUG_B = "mqtt_sparkplug_b", "MQTT (Sparkplug B)"
        OPCUA = "opcua", "OPC UA"

    class Status(models.TextChoices):
        STOPPED = "stopped", "stopped"
        CONNECTING = "connecting", "connecting"
        CONNECTED = "connected", "connected"
        ERROR = "error", "error"

    class SecurityMode(models.TextChoices):
        NONE = "None", "None"
        SIGN = "Sign", "Sign"
        SIGN_AND_ENCRYPT = "SignAndEncrypt", "Sign and encrypt"

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    endpoint = models.CharField(
        max_length=300, help_text="mqtt://host:1883, mqtts://host:8883 or opc.tcp://host:4840/path"
    )
    topic_filter = models.CharField(
        max_length=300, blank=True, help_text="MQTT subscription, e.g. plant/# or spBv1.0/# (default: #)."
    )
    username_env = models.CharField(
        max_length=100,
        blank=True,
        help_text=(
            "Name of an environment variable of the connectors process holding the user name; it must start "
            "with ARIA_CONNECTOR_ (e.g. ARIA_CONNECTOR_PLANT_USER)."
        ),
    )
    password_env = models.CharField(
        max_length=100,
        blank=True,
        help_text=(
            "Name of an environment variable of the connectors process holding the password; it must start "
            "with ARIA_CONNECTOR_ (e.g. ARIA_CONNECTOR_PLANT_PASSWORD)."
        ),
    )
    security_mode = models.CharField(max_length=20, choices=SecurityMode.choices, default=SecurityMode.NONE)
    security_policy = models.CharField(max_length=40, blank=True, help_text="OPC UA, e.g. Basic256Sha256.")
    certificate_path = models.CharField(max_length=300, blank=True, help_text="OPC UA client certificate (PEM/DER).")
    private_key_path = models.CharField(max_length=300, blank=True, help_text="OPC UA client private key (PEM).")
    enabled = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Written by the running connector.
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.STOPPED)
    status_changed_at = models.DateTimeField(null=True, blank=True)
    last_message_at = models.DateTimeField(null=True, blank=True)
    messages_per_second = models.FloatField(default=0.0)
    messages_total = models.BigIntegerField(default=0)
    samples_total = models.BigIntegerField(default=0)
    last_error = models.CharField(max_length=500, blank=True)
    error_count = models.BigIntegerField(default=0)
    bad_quality_count = models.BigIntegerField(default=0)
    unknown_tag_count = models.BigIntegerField(default=0)
    unknown_tags = models.JSONField(default=list, blank=True, help_text="The first unknown tags seen (at most 50).")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ConnectorTag(models.Model):
    """One source tag (MQTT topic, Sparkplug metric `group/node[/device]/metric`, OPC UA node id)
    → one signal: stored value = raw × scale + offset."""

    connector = models.ForeignKey(Connector, on_delete=models.CASCADE, related_name="tags")
    source = models.CharField(max_length=300)
    signal = models.ForeignKey(SignalDefinition, on_delete=models.CASCADE, related_name="connector_tags")
    scale = models.FloatField(default=1.0)
    offset = models.FloatField(default=0.0)

    class Meta:
        ordering = ["connector_id", "source"]
        constraints = [models.UniqueConstraint(fields=["connector", "source"], name="connector_tag_unique_source")]

    def __str__(self) -> str:
        return f"{self.source} → {self.signal_id}"


class SampleRollup(models.Model):
    """min/max/avg/count/last of one signal over one bucket, rolled up from the raw samples by
    `history_rollup` (sentinel/history/rollups.py). On PostgreSQL partitioned by `bucket`."""

    signal = models.ForeignKey(SignalDefinition, on_delete=models.CASCADE, related_name="+")
    bucket = models.DateTimeField(help_text="Start of the bucket (UTC, aligned).")
    min = models.FloatField()
    max = models.FloatField()
    avg = models.FloatField()
    count = models.IntegerField()
    last = models.FloatField(help_text="Value of the bucket's latest sample.")

    class Meta:
        abstract = True


class SampleRollupMinute(SampleRollup):
    pk = models.CompositePrimaryKey("signal", "bucket")


class SampleRollupHour(SampleRollup):
    pk = models.CompositePrimaryKey("signal", "bucket")


class HistoryDirtyMinute(models.Model):
    """A minute whose samples changed since it was last rolled up: written by a database trigger on
    the samples table in the writer's own transaction (so a reader never sees a sample without its
    mark), taken and re-rolled by `history_rollup`. Append-only on PostgreSQL (no unique index, so
    concurrent ingests never wait on each other); the rollup reads it DISTINCT."""

    minute = models.DateTimeField(db_index=True)
