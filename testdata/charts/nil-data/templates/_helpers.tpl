{{- define "reads-values" -}}[{{ .Values.a }}]{{- end -}}
{{- define "reads-dot" -}}[{{ . }}]{{- end -}}
