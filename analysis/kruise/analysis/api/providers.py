"""Metric provider configurations (Argo ``MetricProvider`` and the provider structs).

Prometheus, web and Kayenta are modelled field by field, as upstream's CRD does. The other
providers Argo knows (Datadog, Wavefront, New Relic, Job, CloudWatch, Graphite, InfluxDB,
SkyWalking, plugins) are objects whose content is preserved as written, so templates using
them are accepted (and kept) even though kruise measures only Prometheus and web metrics; such
a metric's measurements are Errors naming the unsupported provider.
"""

from __future__ import annotations

from pydantic import Field

from kruise.core.api import Bool, Int64, KubeModel, PreservedObject

__all__ = [
    "PROVIDER_KINDS",
    "Authentication",
    "BasicAuth",
    "KayentaMetric",
    "KayentaScope",
    "KayentaThreshold",
    "MetricProvider",
    "OAuth2Config",
    "PrometheusMetric",
    "PrometheusRangeQuery",
    "ScopeDetail",
    "Sigv4Config",
    "WebMetric",
    "WebMetricHeader",
]


class WebMetricHeader(KubeModel):
    """One HTTP header sent with a query: a key and a value."""

    key: str = Field(description="Header name.")
    value: str = Field(description="Header value; may reference {{args.<name>}}.")


class Sigv4Config(KubeModel):
    """AWS SigV4 signing for Amazon Managed Prometheus (accepted; not implemented by kruise)."""

    region: str | None = Field(default=None, description="AWS region.")
    profile: str | None = Field(default=None, description="AWS profile.")
    role_arn: str | None = Field(default=None, description="Role to assume.")


class OAuth2Config(KubeModel):
    """OAuth2 client-credentials: a token from tokenUrl is sent as a Bearer header."""

    token_url: str | None = Field(default=None, description="Token endpoint URL.")
    client_id: str | None = Field(default=None, description="OAuth2 client id.")
    client_secret: str | None = Field(default=None, description="OAuth2 client secret.")
    scopes: list[str] | None = Field(default=None, description="Scopes requested with the token.")


class BasicAuth(KubeModel):
    """HTTP basic authentication."""

    username: str | None = Field(default=None, description="User name.")
    password: str | None = Field(default=None, description="Password.")


class Authentication(KubeModel):
    """How a provider authenticates: one of sigv4, oauth2 or basicAuth."""

    sigv4: Sigv4Config | None = Field(default=None, description="Sigv4 config.")
    oauth2: OAuth2Config | None = Field(default=None, description="OAuth2 config.")
    basic_auth: BasicAuth | None = Field(default=None, description="Basic auth config.")


class PrometheusRangeQuery(KubeModel):
    """A range query: start and end are expressions such as now() - duration("5m")."""

    start: str | None = Field(default=None, description="Start of the range, as an expression.")
    end: str | None = Field(default=None, description="End of the range, as an expression.")
    step: str | None = Field(default=None, description="Query resolution step width (e.g. 1m).")


class PrometheusMetric(KubeModel):
    """PrometheusMetric is an instant PromQL query against a Prometheus server.

    The result is ``result`` in the conditions: a scalar is a number, a vector a list of numbers
    (``result[0]``), a matrix a list of lists. ``timeout`` is in seconds (default 30).
    """

    address: str | None = Field(default=None, description="URL of the Prometheus server.")
    query: str | None = Field(default=None, description="PromQL query; may reference {{args.<name>}}.")
    authentication: Authentication | None = Field(
        default=None, description="Authentication details for the server."
    )
    timeout: Int64 | None = Field(
        default=None, description="Query timeout in seconds (default 30); negative is an error."
    )
    insecure: Bool | None = Field(default=None, description="Skip TLS certificate verification.")
    headers: list[WebMetricHeader] | None = Field(
        default=None, description="Additional HTTP headers sent with the query."
    )
    range_query: PrometheusRangeQuery | None = Field(
        default=None, description="Run a range query instead of an instant query."
    )


class WebMetric(KubeModel):
    """WebMetric calls an HTTP endpoint and reads a value from its JSON answer.

    ``jsonPath`` uses Kubernetes JSONPath template syntax (``{$.data.ok}``; default ``{$}``);
    ``timeoutSeconds`` defaults to 10. A non-2xx answer is an Error measurement.
    """

    method: str | None = Field(default=None, description="HTTP method: GET (default), POST or PUT.")
    url: str = Field(description="URL of the endpoint; may reference {{args.<name>}}.")
    headers: list[WebMetricHeader] | None = Field(default=None, description="HTTP headers to send.")
    body: str | None = Field(default=None, description="Request body (POST and PUT only).")
    timeout_seconds: Int64 | None = Field(
        default=None, description="Request timeout in seconds (default 10)."
    )
    json_path: str | None = Field(
        default=None, description="JSONPath of the value in the answer, e.g. {$.data.ok}."
    )
    insecure: Bool | None = Field(default=None, description="Skip TLS certificate verification.")
    json_body: PreservedObject | None = Field(
        default=None,
        description="Request body as a JSON object (POST and PUT only; exclusive with body).",
    )
    authentication: Authentication | None = Field(
        default=None, description="Authentication details for the endpoint."
    )


class KayentaThreshold(KubeModel):
    """Score thresholds of a Kayenta canary judgement."""

    pass_: Int64 = Field(alias="pass", description="Score at or above which the canary passes.")
    marginal: Int64 = Field(description="Score below which the canary fails.")


class ScopeDetail(KubeModel):
    """One Kayenta scope: which series, where, and over what time range."""

    scope: str = Field(description="Scope query.")
    region: str = Field(description="Region.")
    step: Int64 = Field(description="Step in seconds.")
    start: str = Field(description="Start time.")
    end: str = Field(description="End time.")


class KayentaScope(KubeModel):
    """A named pair of control and experiment scopes."""

    name: str = Field(description="Scope name.")
    control_scope: ScopeDetail = Field(description="Control (baseline) scope.")
    experiment_scope: ScopeDetail = Field(description="Experiment (canary) scope.")


class KayentaMetric(KubeModel):
    """KayentaMetric asks a Kayenta server for a canary judgement (accepted; not measured)."""

    address: str = Field(description="Kayenta URL.")
    application: str = Field(description="Application name.")
    canary_config_name: str = Field(description="Canary config name.")
    metrics_account_name: str = Field(description="Metrics account name.")
    configuration_account_name: str = Field(description="Configuration account name.")
    storage_account_name: str = Field(description="Storage account name.")
    threshold: KayentaThreshold = Field(description="Judgement thresholds.")
    scopes: list[KayentaScope] = Field(description="Scopes compared.")


_Other = PreservedObject


class MetricProvider(KubeModel):
    """MetricProvider names the system a metric is measured with; exactly one must be set."""

    prometheus: PrometheusMetric | None = Field(default=None, description="Prometheus query.")
    kayenta: KayentaMetric | None = Field(default=None, description="Kayenta canary judgement.")
    web: WebMetric | None = Field(default=None, description="Generic HTTP web metric.")
    datadog: _Other | None = Field(default=None, description="Datadog query (kept, not measured).")
    wavefront: _Other | None = Field(default=None, description="Wavefront query (kept, not measured).")
    new_relic: _Other | None = Field(default=None, description="New Relic query (kept, not measured).")
    job: _Other | None = Field(default=None, description="Kubernetes Job metric (kept, not measured).")
    cloud_watch: _Other | None = Field(default=None, description="CloudWatch query (kept, not measured).")
    graphite: _Other | None = Field(default=None, description="Graphite query (kept, not measured).")
    influxdb: _Other | None = Field(default=None, description="InfluxDB query (kept, not measured).")
    skywalking: _Other | None = Field(default=None, description="SkyWalking query (kept, not measured).")
    plugin: _Other | None = Field(default=None, description="Metric plugins (kept, not measured).")

    def kinds(self) -> list[str]:
        """The wire names of the providers that are set, e.g. ``["prometheus"]``."""
        return [wire for attr, wire in PROVIDER_KINDS if getattr(self, attr) is not None]


PROVIDER_KINDS: tuple[tuple[str, str], ...] = (
    ("prometheus", "prometheus"),
    ("kayenta", "kayenta"),
    ("web", "web"),
    ("datadog", "datadog"),
    ("wavefront", "wavefront"),
    ("new_relic", "newRelic"),
    ("job", "job"),
    ("cloud_watch", "cloudWatch"),
    ("graphite", "graphite"),
    ("influxdb", "influxdb"),
    ("skywalking", "skywalking"),
    ("plugin", "plugin"),
)
"""(Python attribute, wire name) of every provider field, in Argo's order."""
