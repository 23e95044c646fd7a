{{- define "calls" -}}
{{ dig "s" "b" "c" . }}
{{- end -}}
