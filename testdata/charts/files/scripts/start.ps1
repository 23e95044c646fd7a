Copy-Item C:\config\web.config C:\inetpub\wwwroot\web.config
C:\ServiceMonitor.exe w3svc
