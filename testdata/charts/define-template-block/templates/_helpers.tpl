{{- define "dtb.name" -}}
{{ .Chart.Name }}-{{ .Release.Name }}
{{- end -}}
{{- define "dtb.labels" }}
app: {{ include "dtb.name" . }}
chart: {{ .Chart.Name | quote }}
{{- end }}
{{- define "dtb.withArg" -}}
{{ .greeting }}, {{ .who }}
{{- end -}}
