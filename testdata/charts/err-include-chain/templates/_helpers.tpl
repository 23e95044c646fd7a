{{- define "inner" -}}
{{ keys .s }}
{{- end -}}
{{- define "middle" -}}
x: {{ include "inner" . }}
{{- end -}}
