{{/* Names ------------------------------------------------------------ */}}

{{- define "ttanjit.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ttanjit.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* "<fullname>-<component>"; call with (dict "root" $ "component" "shard") */}}
{{- define "ttanjit.componentName" -}}
{{- printf "%s-%s" (include "ttanjit.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The matchmaker's headless Service: one DNS record per ready replica, for
     the gateways' gRPC channel to each replica (dns:///<name>:<port>). */}}
{{- define "ttanjit.matchmakerHeadless" -}}
{{- printf "%s-headless" (include "ttanjit.componentName" (dict "root" .root "component" "matchmaker")) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Label of the one Service per component that Prometheus scrapes (its
     ServiceMonitor selects it): a component with several Services is
     scraped once, and never through a Service players reach. */}}
{{- define "ttanjit.scrapeLabel" -}}
ttanjit.io/scrape: "true"
{{- end }}

{{- define "ttanjit.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels ----------------------------------------------------------- */}}

{{- define "ttanjit.labels" -}}
helm.sh/chart: {{ include "ttanjit.chart" . }}
app.kubernetes.io/name: {{ include "ttanjit.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: ttanjit
{{- end }}

{{- define "ttanjit.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ttanjit.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "ttanjit.componentLabels" -}}
{{ include "ttanjit.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Service account, image, secret ------------------------------------ */}}

{{- define "ttanjit.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ttanjit.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ttanjit.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{- define "ttanjit.secretName" -}}
{{- default (printf "%s-token" (include "ttanjit.fullname" .)) .Values.auth.existingSecret }}
{{- end }}

{{- define "ttanjit.secretKey" -}}
{{- if .Values.auth.existingSecret }}{{ .Values.auth.existingSecretKey }}{{ else }}token-secret{{ end }}
{{- end }}

{{/* Pod pieces shared by every component ------------------------------- */}}

{{/* Environment common to every service (docs/protocol.md §6). The
gateways (dict "Values" .Values "user" "gateway") and the bot workers
("user" "bots") read their address from nats.gatewayExistingSecret,
nats.botsExistingSecret when set: NATS's ttanjit-gateway and ttanjit-bots
users (deploy/nats/values.yaml). */}}
{{- define "ttanjit.env" -}}
{{- $user := .user | default "" }}
- name: TTANJIT_NATS_URL
{{- if and (eq $user "bots") .Values.nats.botsExistingSecret }}
  valueFrom:
    secretKeyRef:
      name: {{ .Values.nats.botsExistingSecret | quote }}
      key: {{ .Values.nats.botsExistingSecretKey | default "nats-url" | quote }}
{{- else if and (eq $user "gateway") .Values.nats.gatewayExistingSecret }}
  valueFrom:
    secretKeyRef:
      name: {{ .Values.nats.gatewayExistingSecret | quote }}
      key: {{ .Values.nats.gatewayExistingSecretKey | default "nats-url" | quote }}
{{- else if .Values.nats.existingSecret }}
  valueFrom:
    secretKeyRef:
      name: {{ .Values.nats.existingSecret | quote }}
      key: {{ .Values.nats.existingSecretKey | default "nats-url" | quote }}
{{- else }}
  value: {{ .Values.nats.url | quote }}
{{- end }}
- name: TTANJIT_NATS_PREFIX
  value: {{ .Values.nats.prefix | quote }}
- name: TTANJIT_JS_REPLICAS
  value: {{ .Values.nats.jetstreamReplicas | quote }}
- name: TTANJIT_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- end }}

{{/* The shards' record key (values "records"; a release's values from
     before it have none: helm upgrade --reuse-values): its Secret's name
     and key, or "" when none is given. */}}
{{- define "ttanjit.recordKeySecret" -}}
{{- $r := .Values.records | default dict }}
{{- if $r.existingSecret }}
{{- $r.existingSecret }}
{{- else if $r.signingKey }}
{{- printf "%s-record-key" (include "ttanjit.fullname" .) }}
{{- end }}
{{- end }}

{{- define "ttanjit.recordKeyEnv" -}}
{{- $r := .Values.records | default dict }}
{{- with include "ttanjit.recordKeySecret" . }}
- name: TTANJIT_RECORD_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . | quote }}
      key: {{ ternary ($r.existingSecretKey | default "record-key") "record-key" (not (empty $r.existingSecret)) | quote }}
{{- end }}
{{- end }}

{{- define "ttanjit.tokenSecretEnv" -}}
- name: TTANJIT_TOKEN_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "ttanjit.secretName" . }}
      key: {{ include "ttanjit.secretKey" . }}
{{- end }}

{{/* Pod-level spec shared by every component; call with (dict "root" $ "component" "x" "values" .Values.x) */}}
{{- define "ttanjit.podCommon" -}}
{{- $root := .root -}}
serviceAccountName: {{ include "ttanjit.serviceAccountName" $root }}
automountServiceAccountToken: false
securityContext:
  {{- toYaml $root.Values.podSecurityContext | nindent 2 }}
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $root.Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- if $root.Values.topologySpread.enabled }}
topologySpreadConstraints:
  {{- range $root.Values.topologySpread.topologyKeys }}
  - maxSkew: {{ $root.Values.topologySpread.maxSkew }}
    topologyKey: {{ . }}
    whenUnsatisfiable: {{ $root.Values.topologySpread.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- include "ttanjit.selectorLabels" (dict "root" $root "component" $.component) | nindent 8 }}
  {{- end }}
{{- end }}
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: {{ $root.Values.tmpSizeLimit }}
{{- end }}

{{/* Container-level pieces: image, security context, /tmp mount. */}}
{{- define "ttanjit.containerCommon" -}}
image: {{ include "ttanjit.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
securityContext:
  {{- toYaml .Values.securityContext | nindent 2 }}
volumeMounts:
  - name: tmp
    mountPath: /tmp
{{- end }}
