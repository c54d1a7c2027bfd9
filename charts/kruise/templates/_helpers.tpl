{{/* Namespace of everything namespaced in this chart (the manager reads it as $POD_NAMESPACE). */}}
{{- define "kruise.namespace" -}}
{{- .Values.installation.namespace | default "kruise-system" -}}
{{- end -}}

{{/*
kruise-rollout's values (openkruise/charts kruise-rollout 0.6) are aliases of kruise's: when set,
they win. $r below is its `rollout:` block, or an empty dict.
*/}}
{{- define "kruise.replicas" -}}
{{- if kindIs "invalid" .Values.replicaCount -}}{{ .Values.manager.replicas }}{{- else -}}{{ .Values.replicaCount }}{{- end -}}
{{- end -}}

{{- define "kruise.webhookPort" -}}
{{- $r := .Values.rollout | default dict -}}
{{- (dig "webhook" "port" .Values.manager.webhook.port $r) | int -}}
{{- end -}}

{{- define "kruise.healthPort" -}}
{{- $r := .Values.rollout | default dict -}}
{{- (get $r "healthBindPort" | default .Values.manager.healthProbe.port) | int -}}
{{- end -}}

{{/* --metrics-addr: kruise-rollout's metricsBindAddr as given, else :<manager.metrics.port>. */}}
{{- define "kruise.metricsAddr" -}}
{{- $r := .Values.rollout | default dict -}}
{{- get $r "metricsBindAddr" | default (printf ":%d" (int .Values.manager.metrics.port)) -}}
{{- end -}}

{{- define "kruise.metricsPort" -}}
{{- include "kruise.metricsAddr" . | splitList ":" | last | int -}}
{{- end -}}

{{- define "kruise.managerLogLevel" -}}
{{- $r := .Values.rollout | default dict -}}
{{- include "kruise.logLevel" (dig "log" "level" .Values.manager.log.level $r) -}}
{{- end -}}

{{/* The feature gates asked for: featureGates, then kruise-rollout's rollout.featureGates. */}}
{{- define "kruise.featureGates" -}}
{{- $r := .Values.rollout | default dict -}}
{{- without (list (.Values.featureGates | default "" | toString) (get $r "featureGates" | default "" | toString)) "" | join "," -}}
{{- end -}}

{{- define "kruise.externalCerts" -}}
{{- if regexMatch "(^|,)\\s*EnableExternalCerts\\s*=\\s*(?i:true)\\s*(,|$)" (include "kruise.featureGates" .) -}}true{{- end -}}
{{- end -}}

{{/* --webhook-cert-writer from manager.webhook.certSource and EnableExternalCerts. */}}
{{- define "kruise.certWriter" -}}
{{- if include "kruise.externalCerts" . -}}external{{- else if eq .Values.manager.webhook.certSource "manager" -}}fs{{- else -}}secret{{- end -}}
{{- end -}}

{{- define "kruise.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels on every object of the chart. */}}
{{- define "kruise.labels" -}}
app.kubernetes.io/name: kruise
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ include "kruise.chart" . }}
{{- end -}}

{{/* The single image of the manager and the daemon. */}}
{{- define "kruise.image" -}}
{{- $image := .Values.image | default dict -}}
{{- $repo := get $image "repository" | default .Values.manager.image.repository -}}
{{- $tag := get $image "tag" | default .Values.manager.image.tag | default .Chart.AppVersion | toString -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}

{{- define "kruise.imagePullPolicy" -}}
{{- get (.Values.image | default dict) "pullPolicy" | default .Values.manager.image.pullPolicy -}}
{{- end -}}

{{/*
Feature gates this manager understands (kruise.rollouts.manager.options.FEATURE_GATES; a test
keeps the two lists equal).
*/}}
{{- define "kruise.knownFeatureGates" -}}
CloneSetShortHash,CloneSetPartitionRollback,PreparingUpdateAsUpdate,InPlaceUpdateEnvFromMetadata,ResourcesDeletionProtection,TemplateNoDefaults,StatefulSetAutoDeletePVC,StatefulSetStartOrdinal,PodIndexLabel,StatefulSetAutoResizePVCGate,EnableExternalCerts,PodWebhook,SidecarSetPatchPodMetadataDefaultsAllowed,AdvancedDeployment,KeepWorkloadPausedOnRolloutDeletion,RolloutHistory,KruiseDaemon,DaemonWatchingPod,ImagePullJobGate,PodProbeMarkerGate,PreDownloadImageForInPlaceUpdate,WorkloadSpread,PodUnavailableBudgetDeleteGate,PodUnavailableBudgetUpdateGate,ResourceDistributionGate,DeletionProtectionForCRDCascadingGate
{{- end -}}

{{/*
--feature-gates for the manager and the daemon: .Values.featureGates checked against the known
gates (KruiseDaemon too: the manager's CRR webhooks and controller follow it, as upstream's).
Fails on malformed or unknown gates.
*/}}
{{- define "kruise.managerFeatureGates" -}}
{{- $known := splitList "," (include "kruise.knownFeatureGates" .) -}}
{{- $out := list -}}
{{- range $raw := splitList "," (include "kruise.featureGates" .) -}}
{{- $item := trim $raw -}}
{{- if $item -}}
{{- $parts := splitList "=" $item -}}
{{- $name := first $parts -}}
{{- if or (ne (len $parts) 2) (not (has (lower (last $parts)) (list "true" "false"))) -}}
{{- fail (printf "featureGates: %q is not Name=true|false" $item) -}}
{{- end -}}
{{- if has $name $known -}}
{{- $out = append $out $item -}}
{{- else -}}
{{- fail (printf "featureGates: unknown gate %q; this kruise manager knows %s" $name (join ", " $known)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- join "," $out -}}
{{- end -}}

{{/* Whether the daemon DaemonSet (and its RBAC) is rendered. */}}
{{- define "kruise.daemonEnabled" -}}
{{- $off := regexMatch "(^|,)\\s*KruiseDaemon\\s*=\\s*(?i:false)\\s*(,|$)" (include "kruise.featureGates" .) -}}
{{- if and .Values.daemon.enabled (not $off) -}}true{{- end -}}
{{- end -}}

{{/*
--webhook-failure-policy: a string (Fail/Ignore), or upstream's map form, whose `default` (Fail
when absent) applies to every webhook but the mutating pod webhook.
*/}}
{{- define "kruise.webhookFailurePolicy" -}}
{{- $p := .Values.webhookConfiguration.failurePolicy | default "Fail" -}}
{{- if kindIs "map" $p -}}
{{- $p = get $p "default" | default "Fail" -}}
{{- end -}}
{{- include "kruise.checkFailurePolicy" (list $p "") -}}
{{- $p -}}
{{- end -}}

{{/*
--pod-webhook-failure-policy: `pods` of upstream's map form (mpod.kb.io's failurePolicy);
empty (no flag: the pod webhook follows --webhook-failure-policy) for a string or no `pods`.
*/}}
{{- define "kruise.podWebhookFailurePolicy" -}}
{{- $p := .Values.webhookConfiguration.failurePolicy -}}
{{- if and (kindIs "map" $p) (hasKey $p "pods") -}}
{{- include "kruise.checkFailurePolicy" (list $p.pods ".pods") -}}
{{- $p.pods -}}
{{- end -}}
{{- end -}}

{{/* Fails the render unless the policy (list value suffix) is Fail or Ignore. */}}
{{- define "kruise.checkFailurePolicy" -}}
{{- $p := index . 0 -}}
{{- if not (has $p (list "Fail" "Ignore")) -}}
{{- fail (printf "webhookConfiguration.failurePolicy%s must be Fail or Ignore, not %q" (index . 1) $p) -}}
{{- end -}}
{{- end -}}

{{/*
KRUISE_LOG_LEVEL from a log.level value: a Python level name, or a klog verbosity number
(upstream's values use "4"): 0-4 -> INFO, 5+ -> DEBUG.
*/}}
{{- define "kruise.logLevel" -}}
{{- $v := . | default "INFO" | toString | upper -}}
{{- if regexMatch "^[0-9]+$" $v -}}
{{- if ge (atoi $v) 5 -}}DEBUG{{- else -}}INFO{{- end -}}
{{- else if has $v (list "DEBUG" "INFO" "WARNING" "ERROR" "CRITICAL") -}}
{{- $v -}}
{{- else -}}
{{- fail (printf "log.level %q: want DEBUG, INFO, WARNING, ERROR or a klog number" $v) -}}
{{- end -}}
{{- end -}}

{{/* Where the manager finds (or writes) its webhook certificates. */}}
{{- define "kruise.webhookCertDir" -}}
/etc/kruise/webhook-certs
{{- end -}}

{{/* Pod-level security context shared by the chart's pods (not the host-network daemon). */}}
{{- define "kruise.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 65534
runAsGroup: 65534
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end -}}
