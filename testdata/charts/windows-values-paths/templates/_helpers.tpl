{{- define "vp.image" -}}
"{{ .image.repository }}:{{ .image.tag }}"
{{- end -}}
