{{- define "check.mode" -}}
{{- if ne .mode "ok" }}{{ fail (printf "mode %q is not supported" .mode) }}{{ end -}}
{{- end -}}
{{- define "check.all" -}}
  {{ include "check.mode" . }}
{{- end -}}
