{{/* Names, labels, the exporter's config file and the pod template shared by the workloads. */}}

{{- define "trunk-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "trunk-exporter.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "trunk-exporter.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "trunk-exporter.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "trunk-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "trunk-exporter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "trunk-exporter.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "trunk-exporter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "trunk-exporter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "trunk-exporter.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The StatefulSet's name: at most 52 characters, since its pods carry the label
controller-revision-hash: <name>-<10 characters>, and a label value is at most 63.
*/}}
{{- define "trunk-exporter.statefulSetName" -}}
{{- include "trunk-exporter.fullname" . | trunc 52 | trimSuffix "-" -}}
{{- end -}}

{{/* The StatefulSet's headless Service (its serviceName), which gives each shard's pod a DNS name. */}}
{{- define "trunk-exporter.headlessServiceName" -}}
{{- printf "%s-headless" (include "trunk-exporter.fullname" . | trunc 54 | trimSuffix "-") -}}
{{- end -}}

{{/* An httpGet probe asks over HTTPS when the exporter serves TLS (the kubelet does not verify it). */}}
{{- define "trunk-exporter.probe" -}}
{{- $probe := deepCopy .probe -}}
{{- if and .tls $probe.httpGet -}}
{{- $_ := set $probe.httpGet "scheme" "HTTPS" -}}
{{- end -}}
{{- toYaml $probe -}}
{{- end -}}

{{- define "trunk-exporter.tokenSecretName" -}}
{{- default (include "trunk-exporter.fullname" .) .Values.token.existingSecret -}}
{{- end -}}

{{- define "trunk-exporter.apiKeySecretName" -}}
{{- default (include "trunk-exporter.fullname" .) .Values.apiKey.existingSecret -}}
{{- end -}}

{{/* The webhook objects' name: the Ingress or HTTPRoute, and the chart-made signing secret. */}}
{{- define "trunk-exporter.webhooksName" -}}
{{- printf "%s-webhooks" (include "trunk-exporter.fullname" . | trunc 54 | trimSuffix "-") -}}
{{- end -}}

{{- define "trunk-exporter.webhookSecretName" -}}
{{- default (include "trunk-exporter.webhooksName" .) .Values.webhooks.signingSecret.existingSecret -}}
{{- end -}}

{{/*
The exporter's config file: values.config plus the token file, listen address, TLS files and
webhook signing-secret file the pod uses.
*/}}
{{- define "trunk-exporter.config" -}}
{{- $discovery := .Values.config.discovery | default dict -}}
{{- if and (not .Values.config.targets) (not $discovery.enabled) -}}
{{- fail "config.targets: list at least one repository (repo, branches, flakyTests), or turn config.discovery.enabled on with an apiKey" -}}
{{- end -}}
{{- /* The exporter's own rules between the credentials and the config (src/config/credentialRules.ts), refused here rather than by the pod at start. */ -}}
{{- $hasToken := or .Values.token.value .Values.token.existingSecret -}}
{{- $hasApiKey := or .Values.apiKey.value .Values.apiKey.existingSecret -}}
{{- if and $discovery.enabled (not $hasApiKey) -}}
{{- fail "config.discovery.enabled: needs an API key (apiKey.value or apiKey.existingSecret; one with no permissions is enough): discovery lists the merge queues through API v2, which the token cannot read. Set one, or turn discovery off and list config.targets" -}}
{{- end -}}
{{- $flakyTests := false -}}
{{- range .Values.config.targets -}}
{{- if .flakyTests -}}
{{- $flakyTests = true -}}
{{- end -}}
{{- end -}}
{{- if and $hasToken (not $hasApiKey) $flakyTests (not .Values.config.trunk.orgUrlSlug) -}}
{{- fail "config.trunk.orgUrlSlug: required when a target has flakyTests: true and no API key is set: the token reads the quarantine list through API v1, which names the organization by its slug. Set it, or set apiKey.value or apiKey.existingSecret" -}}
{{- end -}}
{{- include "trunk-exporter.checkTargets" .Values.config.targets -}}
{{- include "trunk-exporter.checkDiscoveryGlobs" $discovery -}}
{{- include "trunk-exporter.checkMetricSelection" (dict "metrics" .Values.config.metrics "known" (.Files.Get "files/metric-families.yaml" | fromYaml)) -}}
{{- $trunk := omit .Values.config.trunk "orgUrlSlug" -}}
{{- if .Values.config.trunk.orgUrlSlug -}}
{{- $_ := set $trunk "orgUrlSlug" .Values.config.trunk.orgUrlSlug -}}
{{- end -}}
{{- if or .Values.token.value .Values.token.existingSecret -}}
{{- $_ := set $trunk "tokenFile" "/etc/trunk-exporter/token/token" -}}
{{- end -}}
{{- if or .Values.apiKey.value .Values.apiKey.existingSecret -}}
{{- $_ := set $trunk "apiKeyFile" "/etc/trunk-exporter/api-key/api-key" -}}
{{- end -}}
{{- $server := merge (dict "address" "0.0.0.0" "port" (int .Values.containerPort)) (deepCopy .Values.config.server) -}}
{{- if .Values.tls.existingSecret -}}
{{- $_ := set $server "tls" (dict "certFile" "/etc/trunk-exporter/tls/tls.crt" "keyFile" "/etc/trunk-exporter/tls/tls.key") -}}
{{- end -}}
{{- /* Every key of `config` as given (discovery, reads, any later one), but trunk and server, built above. */ -}}
{{- $config := deepCopy (omit .Values.config "trunk" "server") -}}
{{- $_ := set $config "trunk" $trunk -}}
{{- $_ := set $config "server" $server -}}
{{- if .Values.webhooks.enabled -}}
{{- if and (eq .Values.workload.kind "StatefulSet") (gt (int .Values.sharding.shards) 1) -}}
{{- fail "webhooks.enabled: not with a sharded StatefulSet (workload.kind StatefulSet, sharding.shards > 1): Svix posts each event to one URL, which reaches one shard, and a shard ignores the other shards' targets" -}}
{{- end -}}
{{- $_ := set $config "webhooks" (dict "enabled" true "path" .Values.webhooks.path "toleranceSeconds" .Values.webhooks.toleranceSeconds "bodyTimeoutSeconds" .Values.webhooks.bodyTimeoutSeconds "signingSecretFile" "/etc/trunk-exporter/webhook/signing-secret") -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{/*
The exporter's refusal of one repository@branch listed twice (src/config/schema.ts): a repository
is one however its name is cased, a branch is case-sensitive.
*/}}
{{- define "trunk-exporter.checkTargets" -}}
{{- $seen := dict -}}
{{- range $index, $target := . -}}
{{- $repo := $target.repo -}}
{{- if kindIs "map" $repo -}}
{{- $repo = printf "%s/%s/%s" $repo.host $repo.owner $repo.name -}}
{{- end -}}
{{- range $branch := $target.branches -}}
{{- $key := printf "%s@%s" (lower $repo) $branch -}}
{{- if hasKey $seen $key -}}
{{- fail (printf "config.targets[%d].branches: duplicate target %s@%s (already in config.targets[%d]; a repository's name is compared without regard to letter case)" $index $repo $branch (get $seen $key)) -}}
{{- end -}}
{{- $_ := set $seen $key $index -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The exporter's limit of 100 globs with `*` in each of discovery.repos and discovery.branches
(src/config/schema.ts), whether discovery is on or not: each such glob is matched against every
queue of the organization at each discovery, where names without `*` are looked up.
*/}}
{{- define "trunk-exporter.checkDiscoveryGlobs" -}}
{{- $discovery := . -}}
{{- range $list := list "repos" "branches" -}}
{{- $stars := 0 -}}
{{- range $glob := get $discovery $list | default list -}}
{{- if contains "*" $glob -}}
{{- $stars = add1 $stars -}}
{{- end -}}
{{- end -}}
{{- if gt $stars 100 -}}
{{- fail (printf "config.discovery.%s: %d globs with *, at most 100 (each is matched against every queue at each discovery); name more without *" $list $stars) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The exporter's refusal of a metrics.include or metrics.exclude entry that matches no family, or,
excluded, only families that always stay (src/metrics/selection.ts). An entry is names and `*`
(values.schema.json), so `*` as `.*` is the whole regular expression.
*/}}
{{- define "trunk-exporter.checkMetricSelection" -}}
{{- $known := .known -}}
{{- $metrics := .metrics | default dict -}}
{{- range $list := list "include" "exclude" -}}
{{- range $index, $entry := get $metrics $list | default list -}}
{{- $pattern := printf "^%s$" (replace "*" ".*" $entry) -}}
{{- $matched := list -}}
{{- $removable := list -}}
{{- range $name := $known.families -}}
{{- if regexMatch $pattern $name -}}
{{- $matched = append $matched $name -}}
{{- if not (has $name $known.alwaysKept) -}}
{{- $removable = append $removable $name -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not $matched -}}
{{- fail (printf "config.metrics.%s[%d]: %q matches no metric family (docs/metrics.md lists them)" $list $index $entry) -}}
{{- end -}}
{{- if and (eq $list "exclude") (not $removable) -}}
{{- fail (printf "config.metrics.exclude[%d]: %q cannot be excluded: %s always stay on the page" $index $entry (join ", " $matched)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The pod template of both workloads; as a StatefulSet, each pod polls the shard of its ordinal. */}}
{{- define "trunk-exporter.podTemplate" -}}
metadata:
  labels:
    {{- include "trunk-exporter.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    # A changed config or chart-managed token rolls the pod: the exporter reads both at start.
    checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
    {{- if or (and .Values.token.value (not .Values.token.existingSecret)) (and .Values.apiKey.value (not .Values.apiKey.existingSecret)) }}
    checksum/token: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
    {{- end }}
    {{- if and .Values.webhooks.enabled (not .Values.webhooks.signingSecret.existingSecret) }}
    checksum/webhook-secret: {{ include (print .Template.BasePath "/webhook-secret.yaml") . | sha256sum }}
    {{- end }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "trunk-exporter.serviceAccountName" . }}
  automountServiceAccountToken: false
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  containers:
    - name: trunk-exporter
      image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      {{- if and (eq .Values.workload.kind "StatefulSet") (eq .Values.sharding.ordinalFrom "hostname") }}
      # The pod's name (and so its hostname) ends in its ordinal, name-N; the image's shell reads it.
      command:
        - /bin/sh
        - -c
        - exec trunk-exporter --shard="${HOSTNAME##*-}" "$@"
        - trunk-exporter
      {{- end }}
      args:
        - --config
        - /etc/trunk-exporter/config.yaml
        - --log-level
        - {{ .Values.logLevel | quote }}
        {{- if eq .Values.workload.kind "StatefulSet" }}
        {{- if eq .Values.sharding.ordinalFrom "podIndexLabel" }}
        - --shard=$(SHARD)
        {{- end }}
        # In the pod template, so a changed shard count rolls every pod.
        - --total-shards={{ .Values.sharding.shards }}
        {{- end }}
        {{- with .Values.extraArgs }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- if and (eq .Values.workload.kind "StatefulSet") (eq .Values.sharding.ordinalFrom "podIndexLabel") }}
      env:
        # The StatefulSet controller labels each pod with its ordinal (Kubernetes >= 1.28).
        - name: SHARD
          valueFrom:
            fieldRef:
              fieldPath: metadata.labels['apps.kubernetes.io/pod-index']
      {{- end }}
      ports:
        - name: http
          containerPort: {{ .Values.containerPort }}
          protocol: TCP
      livenessProbe:
        {{- include "trunk-exporter.probe" (dict "probe" .Values.livenessProbe "tls" .Values.tls.existingSecret) | nindent 8 }}
      readinessProbe:
        {{- include "trunk-exporter.probe" (dict "probe" .Values.readinessProbe "tls" .Values.tls.existingSecret) | nindent 8 }}
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: config
          mountPath: /etc/trunk-exporter/config.yaml
          subPath: config.yaml
          readOnly: true
        {{- if or .Values.token.value .Values.token.existingSecret }}
        - name: token
          mountPath: /etc/trunk-exporter/token
          readOnly: true
        {{- end }}
        {{- if or .Values.apiKey.value .Values.apiKey.existingSecret }}
        - name: api-key
          mountPath: /etc/trunk-exporter/api-key
          readOnly: true
        {{- end }}
        {{- if .Values.tls.existingSecret }}
        - name: tls
          mountPath: /etc/trunk-exporter/tls
          readOnly: true
        {{- end }}
        {{- if .Values.webhooks.enabled }}
        - name: webhook-secret
          mountPath: /etc/trunk-exporter/webhook
          readOnly: true
        {{- end }}
        - name: tmp
          mountPath: /tmp
  volumes:
    - name: config
      configMap:
        name: {{ include "trunk-exporter.fullname" . }}
    {{- if or .Values.token.value .Values.token.existingSecret }}
    - name: token
      secret:
        secretName: {{ include "trunk-exporter.tokenSecretName" . }}
        items:
          # existingSecretKey names the key of an existing Secret; the chart's own has `token`.
          - key: {{ ternary (.Values.token.existingSecretKey | default "token") "token" (not (empty .Values.token.existingSecret)) }}
            path: token
    {{- end }}
    {{- if or .Values.apiKey.value .Values.apiKey.existingSecret }}
    - name: api-key
      secret:
        secretName: {{ include "trunk-exporter.apiKeySecretName" . }}
        items:
          - key: {{ ternary (.Values.apiKey.existingSecretKey | default "apiKey") "apiKey" (not (empty .Values.apiKey.existingSecret)) }}
            path: api-key
    {{- end }}
    {{- if .Values.tls.existingSecret }}
    - name: tls
      secret:
        secretName: {{ .Values.tls.existingSecret }}
    {{- end }}
    {{- if .Values.webhooks.enabled }}
    - name: webhook-secret
      secret:
        secretName: {{ include "trunk-exporter.webhookSecretName" . }}
        items:
          - key: {{ ternary (.Values.webhooks.signingSecret.existingSecretKey | default "signingSecret") "signingSecret" (not (empty .Values.webhooks.signingSecret.existingSecret)) }}
            path: signing-secret
    {{- end }}
    - name: tmp
      emptyDir:
        sizeLimit: 16Mi
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
