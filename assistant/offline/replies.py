"""OFFLINE STAND-IN reply templates of the operator Q&A (fake engine only), one small table per
language the chat answers in. A model writes its own answer in the operator's language; these are
only what the offline demo engine frames around the tools' data (which stays as recorded)."""

from __future__ import annotations

REPLIES: dict[str, dict[str, str]] = {
    "en": {
        "about": "About {label}: ",
        "the_plant": "the plant",
        "sources": "Sources",
        "no_data": "I could not find data for {label}.",
        "rca": "Root cause on record ({ref}): {text}",
        "started": "No matching RCA on record; started an investigation of {ref}.",
        "no_rca": "No root-cause analysis on record for {label} and no detected work order to investigate.",
        "kpi_worst": "Worst {kpi} since {since}: {tag} ({value} {unit}).",
        "kpi_cell": "{kpi} of {tag} since {since}: {value} {unit}.",
        "kpi_none": "No cell has a {kpi} value since {since}.",
        "ranking": "Ranking",
        "signals": "signals",
        "signal trends": "signal trends",
        "failure history": "failure history",
        "logbook": "logbook",
        "KB": "KB",
        "KPIs": "KPIs",
    },
    "fr": {
        "about": "À propos de {label} : ",
        "the_plant": "l'usine",
        "sources": "Sources",
        "no_data": "Je n'ai pas trouvé de données pour {label}.",
        "rca": "Cause racine enregistrée ({ref}) : {text}",
        "started": "Aucune analyse correspondante ; enquête lancée sur {ref}.",
        "no_rca": "Aucune analyse de cause racine pour {label} et aucun ordre détecté à analyser.",
        "kpi_worst": "Pire {kpi} depuis le {since} : {tag} ({value} {unit}).",
        "kpi_cell": "{kpi} de {tag} depuis le {since} : {value} {unit}.",
        "kpi_none": "Aucune cellule n'a de {kpi} depuis le {since}.",
        "ranking": "Classement",
        "signals": "signaux",
        "signal trends": "tendances",
        "failure history": "historique des pannes",
        "logbook": "main courante",
        "KB": "base de connaissances",
        "KPIs": "indicateurs",
    },
    "de": {
        "about": "Zu {label}: ",
        "the_plant": "der Anlage",
        "sources": "Quellen",
        "no_data": "Ich habe keine Daten zu {label} gefunden.",
        "rca": "Erfasste Ursache ({ref}): {text}",
        "started": "Keine passende Ursachenanalyse; Untersuchung von {ref} gestartet.",
        "no_rca": "Keine Ursachenanalyse zu {label} und kein erkannter Auftrag zum Untersuchen.",
        "kpi_worst": "Schlechteste {kpi} seit {since}: {tag} ({value} {unit}).",
        "kpi_cell": "{kpi} von {tag} seit {since}: {value} {unit}.",
        "kpi_none": "Keine Zelle hat seit {since} einen {kpi}-Wert.",
        "ranking": "Rangfolge",
        "signals": "Signale",
        "signal trends": "Signalverläufe",
        "failure history": "Ausfallhistorie",
        "logbook": "Schichtbuch",
        "KB": "Wissensbasis",
        "KPIs": "Kennzahlen",
    },
    "es": {
        "about": "Sobre {label}: ",
        "the_plant": "la planta",
        "sources": "Fuentes",
        "no_data": "No encontré datos de {label}.",
        "rca": "Causa raíz registrada ({ref}): {text}",
        "started": "Ningún análisis coincide; se inició una investigación de {ref}.",
        "no_rca": "No hay análisis de causa raíz de {label} ni orden detectada que investigar.",
        "kpi_worst": "Peor {kpi} desde {since}: {tag} ({value} {unit}).",
        "kpi_cell": "{kpi} de {tag} desde {since}: {value} {unit}.",
        "kpi_none": "Ninguna celda tiene {kpi} desde {since}.",
        "ranking": "Clasificación",
        "signals": "señales",
        "signal trends": "tendencias",
        "failure history": "historial de fallos",
        "logbook": "bitácora",
        "KB": "base de conocimiento",
        "KPIs": "indicadores",
    },
    "it": {
        "about": "Riguardo a {label}: ",
        "the_plant": "l'impianto",
        "sources": "Fonti",
        "no_data": "Non ho trovato dati per {label}.",
        "rca": "Causa radice registrata ({ref}): {text}",
        "started": "Nessuna analisi corrispondente; avviata un'indagine su {ref}.",
        "no_rca": "Nessuna analisi delle cause per {label} e nessun ordine rilevato da indagare.",
        "kpi_worst": "Peggior {kpi} dal {since}: {tag} ({value} {unit}).",
        "kpi_cell": "{kpi} di {tag} dal {since}: {value} {unit}.",
        "kpi_none": "Nessuna cella ha un {kpi} dal {since}.",
        "ranking": "Classifica",
        "signals": "segnali",
        "signal trends": "andamenti",
        "failure history": "storico guasti",
        "logbook": "registro",
        "KB": "base di conoscenza",
        "KPIs": "indicatori",
    },
    "pt": {
        "about": "Sobre {label}: ",
        "the_plant": "a fábrica",
        "sources": "Fontes",
        "no_data": "Não encontrei dados de {label}.",
        "rca": "Causa raiz registada ({ref}): {text}",
        "started": "Nenhuma análise corresponde; iniciada uma investigação de {ref}.",
        "no_rca": "Nenhuma análise de causa raiz de {label} nem ordem detetada para investigar.",
        "kpi_worst": "Pior {kpi} desde {since}: {tag} ({value} {unit}).",
        "kpi_cell": "{kpi} de {tag} desde {since}: {value} {unit}.",
        "kpi_none": "Nenhuma célula tem {kpi} desde {since}.",
        "ranking": "Classificação",
        "signals": "sinais",
        "signal trends": "tendências",
        "failure history": "histórico de falhas",
        "logbook": "livro de turno",
        "KB": "base de conhecimento",
        "KPIs": "indicadores",
    },
}

# A "why did it trip / fail" question, by its cue words (accents stripped, lower case).
WHY_CUES = (
    r"why|cause|caused|trip|tripped|fail|failed|wrong|stopped"
    r"|pourquoi|declenche\w*|panne|arrete\w*"
    r"|warum|weshalb|ausgelost|ausgefallen|abgeschaltet|ursache"
    r"|por que|porque|causa|disparo|disparou|fallo|falla|falhou|parou"
    r"|perche|scattat\w*|guast\w*|fermat\w*"
)


def reply_text(language: str, key: str) -> str:
    return REPLIES.get(language, REPLIES["en"]).get(key) or REPLIES["en"][key]
