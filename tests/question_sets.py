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


# Issue 49 point 4, what each language gets (docs/search.md): questions a speaker would type,
# written from what each page's command does (not its title), for the pages of the question
# sets translated into that language; ~16 each where that many are (Hindi has 13).
def _page(folder: str, *names: str) -> tuple[str, ...]:
    return tuple(f"pages.{folder}/{name}.md" for name in names)


GERMAN_QUESTIONS: list[Question] = [
    ("wie entpacke ich eine tar.gz-Datei", _page("de", "common/tar")),
    ("nach einem Wort in Dateien suchen", _page("de", "common/grep")),
    ("ein Skript ausführbar machen", _page("de", "common/chmod")),
    ("wie viel Speicherplatz ist auf der Festplatte noch frei", _page("de", "common/df")),
    ("welche Ordner belegen den meisten Platz", _page("de", "common/du")),
    ("eine Kopie eines Repositorys auf meinen Rechner holen", _page("de", "common/git-clone")),
    ("den Besitzer einer Datei ändern", _page("de", "common/chown")),
    ("ein neues SSH-Schlüsselpaar erzeugen", _page("de", "common/ssh-keygen")),
    (
        "meinen öffentlichen Schlüssel auf einen Server kopieren, um mich ohne Passwort anzumelden",
        _page("de", "common/ssh-copy-id"),
    ),
    ("die Unterschiede zwischen zwei Dateien anzeigen", _page("de", "common/diff")),
    ("das Ende einer Logdatei verfolgen, während sie wächst", _page("de", "common/tail")),
    ("meine Commits in das entfernte Repository hochladen", _page("de", "common/git-push")),
    ("laufende Container auflisten", _page("de", "common/docker-ps")),
    ("Dateien finden, die größer als 100 MB sind", _page("de", "common/find")),
    ("prüfen, ob ein Rechner erreichbar ist", _page("de", "common/ping")),
    ("ein Video in ein anderes Format umwandeln", _page("de", "common/ffmpeg")),
]

PORTUGUESE_QUESTIONS: list[Question] = [
    ("como extrair um arquivo tar.gz", _page("pt_BR", "common/tar")),
    ("descompactar um arquivo zip", _page("pt_BR", "common/unzip")),
    ("procurar uma palavra dentro de arquivos", _page("pt_BR", "common/grep")),
    ("encontrar arquivos maiores que 100 MB", _page("pt_BR", "common/find")),
    ("quais pastas ocupam mais espaço", _page("pt_BR", "common/du")),
    ("tornar um script executável", _page("pt_BR", "common/chmod")),
    ("mudar o dono de um arquivo", _page("pt_BR", "common/chown")),
    ("baixar uma cópia de um repositório para minha máquina", _page("pt_BR", "common/git-clone")),
    ("enviar meus commits para o repositório remoto", _page("pt_BR", "common/git-push")),
    ("gerar um novo par de chaves ssh", _page("pt_BR", "common/ssh-keygen")),
    ("listar os contêineres em execução", _page("pt_BR", "common/docker-ps")),
    (
        "acompanhar o final de um arquivo de log enquanto ele cresce",
        _page("pt_BR", "common/tail"),
    ),
    ("mostrar as diferenças entre dois arquivos", _page("pt_BR", "common/diff")),
    ("agendar uma tarefa para rodar toda noite às 2 horas", _page("pt_BR", "common/crontab")),
    ("converter um vídeo para outro formato", _page("pt_BR", "common/ffmpeg")),
    ("ver quais programas usam mais CPU", _page("pt_BR", "linux/top", "common/htop")),
]

ITALIAN_QUESTIONS: list[Question] = [
    ("quanto spazio libero resta sul disco", _page("it", "common/df")),
    ("quali cartelle occupano più spazio", _page("it", "common/du")),
    ("rendere eseguibile uno script", _page("it", "common/chmod")),
    ("cambiare il proprietario di un file", _page("it", "common/chown")),
    ("scaricare una copia di un repository sulla mia macchina", _page("it", "common/git-clone")),
    ("inviare i miei commit al repository remoto", _page("it", "common/git-push")),
    ("salvare le modifiche in stage con un messaggio", _page("it", "common/git-commit")),
    ("creare un collegamento simbolico", _page("it", "common/ln")),
    ("mostrare le differenze tra due file", _page("it", "common/diff")),
    ("eseguire un comando ogni notte alle 2", _page("it", "common/crontab")),
    ("convertire un video in un altro formato", _page("it", "common/ffmpeg")),
    ("scaricare un file da un URL", _page("it", "common/wget", "common/curl")),
    ("elencare i container in esecuzione", _page("it", "common/docker-ps")),
    ("creare una nuova cartella", _page("it", "common/mkdir")),
    ("eliminare una cartella con tutto il suo contenuto", _page("it", "common/rm")),
    ("vedere le prime righe di un file", _page("it", "common/head")),
]

CHINESE_QUESTIONS: list[Question] = [
    ("如何解压tar.gz文件", _page("zh", "common/tar")),
    ("解压zip压缩包", _page("zh", "common/unzip")),
    ("查找大于100MB的文件", _page("zh", "common/find")),
    ("在文件中搜索一个词", _page("zh", "common/grep")),
    ("磁盘还剩多少空间", _page("zh", "common/df")),
    ("哪些文件夹占用空间最多", _page("zh", "common/du")),
    ("从网址下载文件", _page("zh", "common/wget", "common/curl")),
    ("让脚本可以执行", _page("zh", "common/chmod")),
    ("修改文件的所有者", _page("zh", "common/chown")),
    ("按名称结束进程", _page("zh", "common/pkill", "common/killall", "common/kill")),
    ("把公钥复制到服务器实现免密登录", _page("zh", "common/ssh-copy-id")),
    ("复制文件到远程服务器", _page("zh", "common/scp", "common/rsync")),
    ("列出正在运行的容器", _page("zh", "common/docker-ps")),
    ("把提交推送到远程仓库", _page("zh", "common/git-push")),
    ("实时查看日志文件的末尾", _page("zh", "common/tail")),
    ("统计文件的行数", _page("zh", "common/wc")),
]

JAPANESE_QUESTIONS: list[Question] = [
    ("tar.gzファイルを展開する方法", _page("ja", "common/tar")),
    ("ファイルの中から文字列を検索する", _page("ja", "common/grep")),
    ("100MBより大きいファイルを探す", _page("ja", "common/find")),
    ("ディスクの空き容量を確認する", _page("ja", "common/df")),
    ("どのフォルダが一番容量を使っているか", _page("ja", "common/du")),
    ("URLからファイルをダウンロードする", _page("ja", "common/curl", "common/wget")),
    ("スクリプトを実行可能にする", _page("ja", "common/chmod")),
    ("ファイルの所有者を変更する", _page("ja", "common/chown")),
    ("新しいSSH鍵ペアを作成する", _page("ja", "common/ssh-keygen")),
    ("実行中のコンテナを一覧表示する", _page("ja", "common/docker-ps")),
    ("変更をメッセージ付きでコミットする", _page("ja", "common/git-commit")),
    ("テキストファイルの単語を置換する", _page("ja", "common/sed")),
    ("二つのファイルの違いを表示する", _page("ja", "common/diff")),
    ("ホストに接続できるか確認する", _page("ja", "common/ping")),
    ("動画を別の形式に変換する", _page("ja", "common/ffmpeg")),
    ("ファイルをzipで圧縮する", _page("ja", "common/zip")),
]

KOREAN_QUESTIONS: list[Question] = [
    ("tar.gz 파일 압축 해제하는 방법", _page("ko", "common/tar")),
    ("zip 파일 압축 풀기", _page("ko", "common/unzip")),
    ("100MB보다 큰 파일 찾기", _page("ko", "common/find")),
    ("파일 안에서 단어 검색하기", _page("ko", "common/grep")),
    ("디스크에 남은 공간 확인", _page("ko", "common/df")),
    ("어떤 폴더가 용량을 가장 많이 차지하는지", _page("ko", "common/du")),
    ("URL에서 파일 다운로드", _page("ko", "common/wget", "common/curl")),
    ("스크립트를 실행 가능하게 만들기", _page("ko", "common/chmod")),
    ("파일 소유자 변경하기", _page("ko", "common/chown")),
    ("이름으로 프로세스 종료하기", _page("ko", "common/pkill", "common/killall", "common/kill")),
    ("새 SSH 키 쌍 만들기", _page("ko", "common/ssh-keygen")),
    ("원격 서버로 파일 복사하기", _page("ko", "common/scp", "common/rsync")),
    ("실행 중인 컨테이너 목록 보기", _page("ko", "common/docker-ps")),
    ("원격 저장소로 커밋 올리기", _page("ko", "common/git-push")),
    ("로그 파일 끝부분을 실시간으로 보기", _page("ko", "common/tail")),
    ("파일의 줄 수 세기", _page("ko", "common/wc")),
]

RUSSIAN_QUESTIONS: list[Question] = [
    ("как распаковать архив tar.gz", _page("ru", "common/tar")),
    ("распаковать zip-архив", _page("ru", "common/unzip")),
    ("найти файлы больше 100 МБ", _page("ru", "common/find")),
    ("поиск слова в файлах", _page("ru", "common/grep")),
    ("сколько свободного места осталось на диске", _page("ru", "common/df")),
    ("какие папки занимают больше всего места", _page("ru", "common/du")),
    ("скачать файл по ссылке", _page("ru", "common/wget", "common/curl")),
    ("сделать скрипт исполняемым", _page("ru", "common/chmod")),
    ("сменить владельца файла", _page("ru", "common/chown")),
    ("создать новую пару ssh-ключей", _page("ru", "common/ssh-keygen")),
    ("скопировать файлы на удалённый сервер", _page("ru", "common/scp", "common/rsync")),
    ("показать запущенные контейнеры", _page("ru", "common/docker-ps")),
    ("отправить коммиты в удалённый репозиторий", _page("ru", "common/git-push")),
    ("заменить слово в текстовом файле из командной строки", _page("ru", "common/sed")),
    ("показать различия между двумя файлами", _page("ru", "common/diff")),
    ("запускать задачу каждую ночь в 2 часа", _page("ru", "common/crontab")),
]

ARABIC_QUESTIONS: list[Question] = [
    ("كيف أفك ضغط ملف tar.gz", _page("ar", "common/tar")),
    ("البحث عن كلمة داخل الملفات", _page("ar", "common/grep")),
    ("العثور على الملفات الأكبر من 100 ميغابايت", _page("ar", "common/find")),
    ("ما المجلدات التي تشغل أكبر مساحة", _page("ar", "common/du")),
    ("جعل السكربت قابلا للتنفيذ", _page("ar", "common/chmod")),
    ("إيقاف عملية باسمها", _page("ar", "common/pkill", "common/kill")),
    ("نسخ الملفات إلى خادم بعيد", _page("ar", "common/scp")),
    ("عرض الحاويات قيد التشغيل", _page("ar", "common/docker-ps")),
    ("إرسال التعديلات إلى المستودع البعيد", _page("ar", "common/git-push")),
    ("متابعة نهاية ملف السجل أثناء نموه", _page("ar", "common/tail")),
    ("عد الأسطر في ملف", _page("ar", "common/wc")),
    ("تحويل فيديو إلى صيغة أخرى", _page("ar", "common/ffmpeg")),
    ("معرفة البرامج التي تستهلك المعالج أكثر", _page("ar", "common/htop")),
    ("حذف ملف أو مجلد", _page("ar", "common/rm")),
    ("معرفة البرنامج الذي يستخدم منفذا معينا", _page("ar", "common/lsof")),
    ("ضغط الملفات في أرشيف zip", _page("ar", "common/zip")),
]

PERSIAN_QUESTIONS: list[Question] = [
    ("چطور یک فایل tar.gz را از حالت فشرده خارج کنم", _page("fa", "common/tar")),
    ("جستجوی یک کلمه در فایل‌ها", _page("fa", "common/grep")),  # noqa: RUF001
    ("چقدر فضای خالی روی دیسک مانده است", _page("fa", "common/df")),
    ("دانلود یک فایل از اینترنت", _page("fa", "common/curl")),
    ("اجرایی کردن یک اسکریپت", _page("fa", "common/chmod")),
    ("عوض کردن مالک یک فایل", _page("fa", "common/chown")),
    ("نمایش کانتینرهای در حال اجرا", _page("fa", "common/docker-ps")),
    ("مقایسه دو فایل و نمایش تفاوت‌ها", _page("fa", "common/diff")),  # noqa: RUF001
    ("ساختن لینک نمادین", _page("fa", "common/ln")),
    ("ساختن یک پوشه جدید", _page("fa", "common/mkdir")),
    ("نمایش چند خط اول یک فایل", _page("fa", "common/head")),
    ("اجرای دستوری که بعد از بستن ترمینال ادامه پیدا کند", _page("fa", "common/nohup")),
    ("فشرده کردن فایل‌ها به صورت zip", _page("fa", "common/zip")),  # noqa: RUF001
    ("نام کاربری من چیست", _page("fa", "common/whoami")),
]

HINDI_QUESTIONS: list[Question] = [
    ("URL से फ़ाइल डाउनलोड करें", _page("hi", "common/wget")),
    ("रिमोट सर्वर पर फ़ाइलें कॉपी करना", _page("hi", "common/scp")),
    ("चल रहे कंटेनरों की सूची देखें", _page("hi", "common/docker-ps")),
    ("नया फ़ोल्डर बनाना", _page("hi", "common/mkdir")),
    ("सिंबॉलिक लिंक कैसे बनाएं", _page("hi", "common/ln")),
    ("फ़ाइल का नाम बदलना", _page("hi", "common/mv")),
    ("किसी फ़ाइल की सामग्री दिखाना", _page("hi", "common/cat")),
    ("फ़ोल्डर में फ़ाइलों की सूची देखना", _page("hi", "common/ls")),
    ("मैं किस यूज़र के रूप में लॉग इन हूँ", _page("hi", "common/whoami")),
    ("रिमोट सर्वर से कनेक्ट करना", _page("hi", "common/ssh")),
    ("रिपॉजिटरी में कौन सी फ़ाइलें बदली हैं", _page("hi", "common/git-status")),
    ("फ़ाइलों को 7z आर्काइव में संपीड़ित करना", _page("hi", "common/7z")),
    ("किसी फ़ाइल की कॉपी बनाना", _page("hi", "common/cp")),
]

# Every set above, by the language folder its pages are in (docs/search.md's table).
TRANSLATED_QUESTIONS: dict[str, list[Question]] = {
    "es": SPANISH_QUESTIONS,
    "fr": FRENCH_QUESTIONS,
    "de": GERMAN_QUESTIONS,
    "pt_BR": PORTUGUESE_QUESTIONS,
    "it": ITALIAN_QUESTIONS,
    "zh": CHINESE_QUESTIONS,
    "ja": JAPANESE_QUESTIONS,
    "ko": KOREAN_QUESTIONS,
    "ru": RUSSIAN_QUESTIONS,
    "ar": ARABIC_QUESTIONS,
    "fa": PERSIAN_QUESTIONS,
    "hi": HINDI_QUESTIONS,
}
