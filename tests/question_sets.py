"""Questions a new employee (or a new shell user) types, each with the pages that answer it.

Written from the page titles alone, before any search result was seen; shared by
tests/test_search_question_sets.py and `make bench`. An expected page is a source path
(its end); a question is answered in the top 3 when any of its expected pages is there.
"""

from __future__ import annotations

Question = tuple[str, tuple[str, ...]]

HANDBOOK_QUESTIONS: list[Question] = [
    ("how many vacation days do I get", ("travel-and-leave/leave.md",)),
    (
        "I need several weeks off for surgery",
        (
            "travel-and-leave/fmla.md",
            "travel-and-leave/advanced-sick-leave.md",
            "travel-and-leave/leave.md",
        ),
    ),
    ("can I take time off when my baby is born", ("travel-and-leave/paid-parental-leave.md",)),
    (
        "how do I get paid back for a hotel after a work trip",
        ("travel-guide-4-reimbursement.md", "travel-guide-faq.md"),
    ),
    (
        "I lost my laptop, what should I do",
        ("tech-policies/security-incidents.md", "getting-started/equipment.md"),
    ),
    ("what should my password look like", ("tech-policies/password-requirements.md",)),
    (
        "how do I record the hours I worked on each project",
        ("tools/tock.md", "tts-consulting/operations/tock.md"),
    ),
    (
        "does the government pay for my metro commute",
        ("employee-resources-policies/transit-benefit.md",),
    ),
    (
        "can I work a flexible schedule or start later in the day",
        ("employee-resources-policies/work-schedules.md",),
    ),
    ("how do I get my government ID badge", ("getting-started/piv.md",)),
    (
        "who do I talk to when I disagree with a coworker",
        (
            "conflict-feedback-intro.md",
            "conflict-feedback-follow-up-escalation.md",
            "conflict-feedback-principles.md",
        ),
    ),
    ("what do I need to do before I quit", ("hiring-staying-or-changing-jobs/leaving-tts.md",)),
    ("how do I get paid for working extra hours", ("travel-and-leave/overtime.md",)),
    (
        "can I donate my leave to a colleague who is sick",
        ("travel-and-leave/voluntary-leave-transfer-program.md",),
    ),
    (
        "I'm deaf, what support is there for meetings",
        (
            "employee-resources-policies/deaf-hoh.md",
            "employee-resources-policies/supporting-deaf-hoh-colleagues.md",
        ),
    ),
    ("how do I ask for a disability accommodation", ("reasonable-accommodations.md",)),
    (
        "how do I buy software for my team",
        ("general-information-and-resources/software.md", "purchase-requests.md"),
    ),
    ("can we publish our code as open source", ("tech-policies/open-source.md",)),
    (
        "how do I book my first work trip",
        (
            "first-time-travel-get-in-concur.md",
            "travel-guide-2-book-travel.md",
            "first-time-travel-complete-concur-profile.md",
            "travel-and-leave/travel-guide-table-of-contents.md",
        ),
    ),
    ("how do 1:1s with my manager work", ("how-18f-works/one-on-ones.md",)),
    ("what are the rules for Slack channels", ("tools/slack/guidelines.md",)),
    ("I changed my last name after getting married", ("how-18f-works/changing-your-name.md",)),
    (
        "when are performance reviews due",
        ("performance-management/dates.md", "performance-management/index.md"),
    ),
    ("how do I sign my commits", ("tools/git-signing.md",)),
    ("what happens when a project is going badly", ("projects-partners/projects-in-distress.md",)),
    (
        "which video call tool should I use",
        (
            "tools/zoom.md",
            "tools/google-meet.md",
            "classes/meetings-and-meeting-tools.md",
            "tools/teams.md",
        ),
    ),
]

HANDBOOK_TITLES: list[Question] = [
    ("Leave types", ("travel-and-leave/leave.md",)),
    ("Transit Benefit", ("employee-resources-policies/transit-benefit.md",)),
    ("PIV card", ("getting-started/piv.md",)),
    ("Equipment", ("getting-started/equipment.md",)),
    ("Security incidents", ("tech-policies/security-incidents.md",)),
    ("Paid parental leave (PPL)", ("travel-and-leave/paid-parental-leave.md",)),
    ("Hiring", ("hiring-staying-or-changing-jobs/hiring.md",)),
]

# The tldr pages the tests import (all of common/ for the bench): English, and three Korean.
TLDR_NAMES = (
    "tar gzip zstd bzip2 xz 7z unzip zip git git-commit git-push git-clone git-reset git-log "
    "git-branch git-status git-diff ssh ssh-keygen ssh-copy-id scp rsync docker docker-ps kill "
    "pkill killall find grep du df curl wget chmod chown ls cp mv rm mkdir ln ps htop cat less "
    "head tail sort uniq wc sed awk diff ping crontab sudo history whoami date man which ffmpeg "
    "jq openssl gpg base64 sha256sum nc lsof tee xargs watch nohup"
).split()
TLDR_PAGES = [f"pages/common/{name}.md" for name in TLDR_NAMES] + [
    "pages/linux/top.md",
    "pages.ko/common/tar.md",
    "pages.ko/common/git.md",
    "pages.ko/common/grep.md",
]

TLDR_QUESTIONS: list[Question] = [
    ("how do I extract a tar.gz file", ("pages/common/tar.md",)),
    ("unpack a zip archive", ("pages/common/unzip.md",)),
    ("find files bigger than 100 MB", ("pages/common/find.md",)),
    ("search for a word inside files", ("pages/common/grep.md",)),
    ("how much free disk space is left", ("pages/common/df.md",)),
    ("which folders take the most space", ("pages/common/du.md",)),
    ("download a file from a URL", ("pages/common/wget.md", "pages/common/curl.md")),
    ("make a script executable", ("pages/common/chmod.md",)),
    ("change the owner of a file", ("pages/common/chown.md",)),
    (
        "stop a process by its name",
        ("pages/common/pkill.md", "pages/common/killall.md", "pages/common/kill.md"),
    ),
    ("create a new ssh key pair", ("pages/common/ssh-keygen.md",)),
    (
        "copy my public key to a server so I can log in without a password",
        ("pages/common/ssh-copy-id.md",),
    ),
    ("copy files to a remote machine", ("pages/common/scp.md", "pages/common/rsync.md")),
    ("list running containers", ("pages/common/docker-ps.md",)),
    ("save my staged changes with a message", ("pages/common/git-commit.md",)),
    ("send my commits to the remote repository", ("pages/common/git-push.md",)),
    ("get a copy of a repository on my machine", ("pages/common/git-clone.md",)),
    ("follow the end of a log file as it grows", ("pages/common/tail.md",)),
    ("count the lines in a file", ("pages/common/wc.md",)),
    ("replace a word in a text file from the command line", ("pages/common/sed.md",)),
    ("run a job every night at 2 am", ("pages/common/crontab.md",)),
    (
        "see which programs use the most CPU",
        ("pages/linux/top.md", "pages/common/htop.md"),
    ),
    ("convert a video to another format", ("pages/common/ffmpeg.md",)),
    ("pretty print a JSON file", ("pages/common/jq.md",)),
    ("check if a host is reachable", ("pages/common/ping.md",)),
    ("show the differences between two files", ("pages/common/diff.md",)),
    ("create a symbolic link", ("pages/common/ln.md",)),
    ("압축 파일 풀기", ("pages.ko/common/tar.md", "pages/common/tar.md")),
    ("파일에서 문자열 찾기", ("pages.ko/common/grep.md", "pages/common/grep.md")),
]

# Every translation of the pages above (the tldr pages in up to 40 languages, same title and
# commands): English questions must find the English page, French ones the French page.
TLDR_TRANSLATED = [
    (name, f"/{section}/{name}.md")
    for section, name in [("common", n) for n in TLDR_NAMES] + [("linux", "top")]
]

FRENCH_QUESTIONS: list[Question] = [
    ("comment extraire une archive tar.gz", ("pages.fr/common/tar.md",)),
    ("rechercher un mot dans des fichiers", ("pages.fr/common/grep.md",)),
    ("rendre un script exécutable", ("pages.fr/common/chmod.md",)),
    ("combien d'espace disque reste-t-il", ("pages.fr/common/df.md",)),
    ("récupérer une copie d'un dépôt sur ma machine", ("pages.fr/common/git-clone.md",)),
    ("changer le propriétaire d'un fichier", ("pages.fr/common/chown.md",)),
    ("créer une nouvelle paire de clés ssh", ("pages.fr/common/ssh-keygen.md",)),
    ("afficher les différences entre deux fichiers", ("pages.fr/common/diff.md",)),
    ("compter les lignes d'un fichier", ("pages.fr/common/wc.md",)),
    ("suivre la fin d'un fichier journal pendant qu'il grandit", ("pages.fr/common/tail.md",)),
    ("créer un lien symbolique", ("pages.fr/common/ln.md",)),
    ("envoyer mes commits vers le dépôt distant", ("pages.fr/common/git-push.md",)),
    ("lister les conteneurs en cours d'exécution", ("pages.fr/common/docker-ps.md",)),
]

# Written from the page titles alone, as FRENCH_QUESTIONS were (issue 49: what a question in
# each language gets, docs/search.md).
SPANISH_QUESTIONS: list[Question] = [
    ("cómo extraer un archivo tar.gz", ("pages.es/common/tar.md",)),
    ("buscar una palabra dentro de archivos", ("pages.es/common/grep.md",)),
    ("hacer ejecutable un script", ("pages.es/common/chmod.md",)),
    ("cuánto espacio libre queda en el disco", ("pages.es/common/df.md",)),
    ("obtener una copia de un repositorio en mi máquina", ("pages.es/common/git-clone.md",)),
    ("cambiar el propietario de un archivo", ("pages.es/common/chown.md",)),
    ("mostrar las diferencias entre dos archivos", ("pages.es/common/diff.md",)),
    ("contar las líneas de un archivo", ("pages.es/common/wc.md",)),
    ("seguir el final de un archivo de registro mientras crece", ("pages.es/common/tail.md",)),
    ("crear un enlace simbólico", ("pages.es/common/ln.md",)),
    ("enviar mis commits al repositorio remoto", ("pages.es/common/git-push.md",)),
    ("listar los contenedores en ejecución", ("pages.es/common/docker-ps.md",)),
    ("encontrar archivos de más de 100 MB", ("pages.es/common/find.md",)),
    ("qué carpetas ocupan más espacio", ("pages.es/common/du.md",)),
    ("descomprimir un archivo zip", ("pages.es/common/unzip.md",)),
    ("detener un proceso por su número", ("pages.es/common/kill.md",)),
]

TLDR_TITLES: list[Question] = [
    ("tar", ("pages/common/tar.md", "pages.ko/common/tar.md")),
    ("git", ("pages/common/git.md", "pages.ko/common/git.md")),
    ("grep", ("pages/common/grep.md", "pages.ko/common/grep.md")),
    ("curl", ("pages/common/curl.md",)),
    ("chmod", ("pages/common/chmod.md",)),
    ("ssh-keygen", ("pages/common/ssh-keygen.md",)),
]


def reciprocal_rank(ranked: list[str], expected: tuple[str, ...]) -> float:
    """1 / the position of the first expected page among `ranked` source paths (0 if none)."""
    for position, path in enumerate(ranked, start=1):
        if any(path.endswith(e) for e in expected):
            return 1.0 / position
    return 0.0


def measure(answers: list[tuple[list[str], tuple[str, ...]]]) -> dict[str, float]:
    """Top-3 rate and mean reciprocal rank of (ranked source paths, expected) pairs."""
    ranks = [reciprocal_rank(ranked, expected) for ranked, expected in answers]
    return {
        "top3": sum(rank >= 1 / 3 for rank in ranks) / len(ranks),
        "mrr": sum(ranks) / len(ranks),
    }
