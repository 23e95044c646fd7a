{{- define "tpl.hash" -}}
{{ .Values.name | sha256sum | trunc 8 }}
{{- end -}}
