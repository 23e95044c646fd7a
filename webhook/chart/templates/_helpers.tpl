{{- define "winguard.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "winguard.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "winguard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "winguard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "winguard.labels" -}}
{{ include "winguard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "winguard.serviceHost" -}}
{{ include "winguard.fullname" . }}.{{ .Release.Namespace }}.svc
{{- end -}}

{{- define "winguard.tlsSecret" -}}
{{ include "winguard.fullname" . }}-tls
{{- end -}}

{{/* Non-empty when the config reads images' platforms from their registries. */}}
{{- define "winguard.resolvesImages" -}}
{{- if dig "images" "resolve" false (.Values.config | default dict) }}true{{ end }}
{{- end }}
