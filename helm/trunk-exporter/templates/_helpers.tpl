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

{{- define "trunk-exporter.tokenSecretName" -}}
{{- default (include "trunk-exporter.fullname" .) .Values.token.existingSecret -}}
{{- end -}}

{{/* The exporter's config file: values.config plus the token file and listen address the pod uses. */}}
{{- define "trunk-exporter.config" -}}
{{- if not .Values.config.targets -}}
{{- fail "config.targets: list at least one repository (repo, branches, flakyTests)" -}}
{{- end -}}
{{- $trunk := omit .Values.config.trunk "orgUrlSlug" -}}
{{- if .Values.config.trunk.orgUrlSlug -}}
{{- $_ := set $trunk "orgUrlSlug" .Values.config.trunk.orgUrlSlug -}}
{{- end -}}
{{- $_ := set $trunk "tokenFile" "/etc/trunk-exporter/token/token" -}}
{{- $server := dict "address" "0.0.0.0" "port" (int .Values.containerPort) -}}
{{- toYaml (dict "trunk" $trunk "server" $server "polling" .Values.config.polling "metrics" .Values.config.metrics "targets" .Values.config.targets) -}}
{{- end -}}

{{/* The pod template of the workload (Deployment today; a sharded StatefulSet would reuse it). */}}
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
    {{- if not .Values.token.existingSecret }}
    checksum/token: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
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
      args:
        - --config
        - /etc/trunk-exporter/config.yaml
        - --log-level
        - {{ .Values.logLevel | quote }}
        {{- with .Values.extraArgs }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - name: http
          containerPort: {{ .Values.containerPort }}
          protocol: TCP
      livenessProbe:
        {{- toYaml .Values.livenessProbe | nindent 8 }}
      readinessProbe:
        {{- toYaml .Values.readinessProbe | nindent 8 }}
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: config
          mountPath: /etc/trunk-exporter/config.yaml
          subPath: config.yaml
          readOnly: true
        - name: token
          mountPath: /etc/trunk-exporter/token
          readOnly: true
        - name: tmp
          mountPath: /tmp
  volumes:
    - name: config
      configMap:
        name: {{ include "trunk-exporter.fullname" . }}
    - name: token
      secret:
        secretName: {{ include "trunk-exporter.tokenSecretName" . }}
        items:
          - key: {{ .Values.token.existingSecretKey | default "token" }}
            path: token
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
