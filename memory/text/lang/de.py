"""German: the words that tell what kind of sentence a person says."""

from __future__ import annotations

from typing import Final

from .._tables import Saying

SAYING: Final = Saying(
    code="de",
    spaced=True,
    first_person=(
        "ich",
        "mein",
        "meine",
        "meinen",
        "meinem",
        "meiner",
        "mich",
        "mir",
        "wir",
        "unser",
        "unsere",
        "unseren",
        "uns",
        "bin",
        "hab",
        "habe",
    ),
    others=(
        "meine schwester",
        "mein bruder",
        "meine mutter",
        "mein vater",
        "meine mama",
        "mein papa",
        "mein sohn",
        "meine tochter",
        "meine frau",
        "mein mann",
        "mein partner",
        "meine partnerin",
        "meine freundin",
        "mein freund",
        "mein kollege",
        "meine kollegin",
        "mein chef",
        "meine chefin",
        "mein nachbar",
        "meine nachbarin",
        "mein cousin",
        "meine cousine",
        "mein onkel",
        "meine tante",
        "meine oma",
        "mein opa",
        "mein mitbewohner",
        "meine mitbewohnerin",
        "mein vermieter",
        "meine vermieterin",
        "mein hund",
        "meine katze",
        "unser hund",
        "unsere katze",
        "der hund",
        "die katze",
        "der tierarzt",
        "der vermieter",
        "er",
        "sie ist",
        "sie hat",
        "sie wohnt",
        "sie arbeitet",
        "sein",
        "seine",
        "ihr",
        "ihre",
        "jemand",
    ),
    question_starts=(
        "ist",
        "sind",
        "war",
        "hast",
        "habe ich",
        "kann",
        "könnte",
        "sollte",
        "soll",
        "würde",
        "was",
        "wo",
        "wann",
        "warum",
        "wieso",
        "weshalb",
        "wie",
        "welche",
        "welcher",
        "welches",
        "wer",
        "gibt es",
        "lohnt",
        "meinst du",
        "weißt du",
    ),
    hypothetical=(
        "wenn",
        "falls",
        "angenommen",
        "stell dir vor",
        "hypothetisch",
        "würde",
        "würden",
        "wäre",
        "hätte",
        "könnte",
        "vielleicht",
        "eventuell",
        "möglicherweise",
        "theoretisch",
        "überlege",
        "überlegen",
        "träume",
    ),
    plan=("werde", "werden", "plane", "planen", "vorhaben", "habe vor", "irgendwann"),
    past=("früher", "damals", "ehemals", "vor jahren", "als ich", "einst"),
    reported=(
        "sagt",
        "sagte",
        "meinte",
        "schreibt",
        "schrieb",
        "erzählt",
        "erzählte",
        "laut",
        "zitat",
        "hat geschrieben",
        "hat gesagt",
    ),
    joke=(
        "spaß",
        "nur spaß",
        "scherz",
        "witz",
        "im roman",
        "in meinem roman",
        "in der geschichte",
        "im buch",
        "im film",
    ),
    update=(
        "jetzt",
        "nun",
        "inzwischen",
        "mittlerweile",
        "stattdessen",
        "nicht mehr",
        "kein mehr",
        "umgezogen",
        "gezogen",
        "gewechselt",
        "geändert",
        "neu",
        "neue",
        "neuen",
        "neuer",
        "wieder",
        "seit",
        "endlich",
        "aufgehört",
        "angefangen",
        "gekündigt",
        "zurück",
        "verkauft",
        "gekauft",
        "ab sofort",
        "ab jetzt",
        "update",
        "geworden",
        "verlegt",
        "verschoben",
        "erhöht",
        "gesenkt",
        "umgestiegen",
        "hab mich",
        "habe mich",
    ),
    retraction=(
        "eigentlich",
        "korrektur",
        "tippfehler",
        "vertippt",
        "ich meinte",
        "sorry",
        "entschuldigung",
        "falsch",
        "fehler",
        "verwechselt",
        "doch nicht",
        "stimmt nicht",
        "oops",
        "hoppla",
        "moment",
    ),
    negation=("nicht", "kein", "keine", "keinen", "nie", "niemals", "nichts"),
    addition=(
        "auch",
        "außerdem",
        "zusätzlich",
        "ebenfalls",
        "noch ein",
        "noch eine",
        "zweite",
        "zweiten",
        "beide",
    ),
    time=tuple(
        """heute morgen gestern abend abends nacht tag tage tagen woche wochen wochenende monat monate
        monaten jahr jahre jahren jahres zeit mal seit bis montag dienstag mittwoch donnerstag freitag
        samstag sonntag januar februar märz april mai juni juli august september oktober november
        dezember stunde stunden minuten uhr vorher""".split()
    ),
    calendar=tuple(
        """montag dienstag mittwoch donnerstag freitag samstag sonntag januar februar märz april mai juni
        juli august september oktober november dezember""".split()
    ),
    stop=frozenset(
        """lol haha hihi naja halt mal echt eigentlich der die das den dem des ein eine einen einem einer eines und oder aber doch denn weil dass ob zu
        zum zur im in am an auf aus bei mit nach von vor für über unter um bis durch gegen ohne es ist sind
        war waren bin bist sein hat habe haben hatte hast ich du er sie wir ihr mich mir dich dir uns euch
        mein meine meinen meinem meiner dein deine sich so sehr auch noch schon mal nur ja nein nicht kein
        keine was wie wo wann warum wer welche dieser diese dieses jetzt nun dann da hier dort gerade immer
        gibt geht ganz mehr viel viele etwas""".split()
    ),
)


from .._lexicon import Lexicon, words  # noqa: E402  (the table of facts came after the table of sentences)

# The table of facts (`_facts`): for each attribute of a person's life, the everyday German that says a
# sentence is about it and the words that are a value of it (casefolded: "fussball", "weissbier"; names
# written alike in every language are in `en`).
FACTS: Final[dict[str, Lexicon]] = {
    "residence": Lexicon(
        triggers=words(
            """wohne, wohnung, umgezogen, umzug, adresse, zieh, ziehe, ziehen, zieht, zog, gezogen, wohnen,
            wohnt, wohnort, wohnhaft, umziehen, ziehe um, wg, mitbewohner, mitbewohnerin, haus in,
            eigenes haus, eigentumswohnung, vermieter, vermieterin, nachbarn, stadtteil, postleitzahl,
            zuhause, daheim, lebe in, leben in, zurück in, neue wohnung, eingezogen, ausgezogen, wieder in,
            wohngemeinschaft"""
        ),
        ignore=words(
            """zieht sich, ziehen sich, zog sich, zieh dich, adresse der, ip-adresse, e-mail-adresse"""
        ),
    ),
    "job": Lexicon(
        triggers=words(
            """arbeite als, beruf, stelle, job, gekündigt, arbeite jetzt als, bin als, tätig als, stelle als,
            neue stelle, neuer job, jobwechsel, befördert, beförderung, kündigung, entlassen, arbeitslos,
            selbstständig, selbständig, freiberuflich, ausbildung zum, ausbildung zur, ausbildung als,
            praktikum, werkstudent, werkstudentin, teilzeit, vollzeit, schicht, in rente, rentner, rentnerin,
            berufl, umschulung zum, umschulung zur, elternzeit"""
        ),
        values=words(
            """lehrer, lehrerin, grundschullehrer, grundschullehrerin, erzieher, erzieherin, krankenschwester,
            krankenpfleger, krankenpflegerin, pfleger, pflegerin, pflegefachkraft, pflegefachfrau,
            pflegefachmann, altenpfleger, altenpflegerin, hebamme, assistenzarzt, assistenzärztin, apotheker,
            apothekerin, physiotherapeut, physiotherapeutin, psychologe, psychologin, sozialarbeiter,
            sozialarbeiterin, softwareentwickler, softwareentwicklerin, entwickler, entwicklerin,
            programmierer, programmiererin, informatiker, informatikerin, ingenieur, ingenieurin,
            datenanalyst, datenanalystin, projektmanager, projektmanagerin, projektleiter, projektleiterin,
            produktmanager, produktmanagerin, teamleiter, teamleiterin, abteilungsleiter, abteilungsleiterin,
            geschäftsführer, geschäftsführerin, berater, beraterin, unternehmensberater,
            unternehmensberaterin, buchhalter, buchhalterin, steuerberater, steuerberaterin,
            wirtschaftsprüfer, wirtschaftsprüferin, controllerin, anwalt, anwältin, rechtsanwalt,
            rechtsanwältin, jurist, juristin, notar, notarin, bankkaufmann, bankkauffrau, kaufmann, kauffrau,
            bürokaufmann, bürokauffrau, industriekaufmann, industriekauffrau, einzelhandelskaufmann,
            einzelhandelskauffrau, verkäufer, verkäuferin, kassierer, kassiererin, sachbearbeiter,
            sachbearbeiterin, sekretärin, assistentin, designerin, grafikdesigner, grafikdesignerin,
            architekt, architektin, journalist, journalistin, redakteur, redakteurin, übersetzer,
            übersetzerin, dolmetscher, dolmetscherin, marketingmanagerin, personalerin, recruiterin, polizist,
            polizistin, feuerwehrmann, soldat, soldatin, beamter, beamtin, elektriker, elektrikerin, klempner,
            installateur, tischler, tischlerin, schreiner, schreinerin, maurer, mechaniker, mechanikerin,
            kfz-mechatroniker, mechatroniker, mechatronikerin, lkw-fahrer, busfahrer, busfahrerin, taxifahrer,
            taxifahrerin, paketbote, lagerist, lageristin, kellner, kellnerin, köchin, bäcker, bäckerin,
            friseur, friseurin, frisörin, reinigungskraft, tagesmutter, immobilienmakler, immobilienmaklerin,
            pilotin, flugbegleiter, flugbegleiterin, fotograf, fotografin, künstler, künstlerin, musiker,
            musikerin, schauspieler, schauspielerin, student, studentin, azubi, auszubildende, auszubildender,
            praktikant, praktikantin, doktorand, doktorandin, wissenschaftler, wissenschaftlerin, forscher,
            forscherin, professorin, dozent, dozentin, rentner, rentnerin, hausfrau, hausmann, freiberufler,
            freiberuflerin, arbeitslos"""
        ),
        ignore=words(
            """stelle fest, stelle mir vor, stelle dir vor, stelle sicher, an dieser stelle,
            an erster stelle"""
        ),
    ),
    "employer": Lexicon(
        triggers=words(
            """arbeite bei, firma, arbeite für, unternehmen, arbeitgeber, arbeitgeberin, konzern, agentur,
            angefangen bei, fange bei, angestellt bei, beschäftigt bei, neuer arbeitgeber, neue firma"""
        ),
        values=words("""mittelstand, öffentlicher dienst, kanzlei"""),
    ),
    "diet": Lexicon(
        triggers=words(
            """vegetarisch, fleisch, ernähre, ernährung, esse kein, esse keine, esse nur, esse wieder,
            milchprodukte, gluten, laktose, diät"""
        ),
        values=words(
            """vegan, vegane, veganen, veganes, veganer, veganerin, vegetarisch, vegetarische, vegetarischen,
            vegetarischer, vegetarisches, vegetarier, vegetarierin, pescetarisch, pescetarier, pescetarierin,
            flexitarisch, flexitarier, flexitarierin, pflanzlich, pflanzenbasiert, keto, ketogen, low carb,
            glutenfrei, laktosefrei, zöliakie, halal, koscher, omnivor, allesesser, intervallfasten, paleo,
            rohkost, fleischlos, zuckerfrei"""
        ),
    ),
    "drink": Lexicon(
        triggers=words("""kaffee, tee, trinke, trinken, getränk, koffein, tasse"""),
        values=words(
            """kaffee, filterkaffee, schwarzer kaffee, milchkaffee, eiskaffee, cappuccino, latte macchiato,
            espresso, flat white, tee, grüntee, grüner tee, schwarztee, schwarzer tee, kräutertee,
            pfefferminztee, früchtetee, kamillentee, matcha, chai, club-mate, club mate, cola, spezi,
            apfelschorle, schorle, saftschorle, saft, orangensaft, apfelsaft, sprudel, mineralwasser,
            energy drink, energydrink, red bull, bier, weizenbier, hefeweizen, weissbier, radler, pils, wein,
            rotwein, weisswein, sekt, glühwein, kakao, heisse schokolade, hafermilch, sojamilch, mandelmilch,
            kombucha, alkoholfrei, alkoholfreies bier, entkoffeiniert"""
        ),
    ),
    "car": Lexicon(
        triggers=words(
            """auto, wagen, fahre einen, fahre eine, fahre jetzt, mein auto, neues auto, dienstwagen,
            firmenwagen, e-auto, elektroauto, leasing, geleast, führerschein, pkw, kleinwagen, gebrauchtwagen,
            autos, hybridauto, ein kombi, einen kombi"""
        ),
        values=words(
            """e-klasse, c-klasse, a-klasse, 3er bmw, bmw 3er, 1er bmw, 5er bmw, trabi, vw bus, bulli, golf 7,
            golf 8, e-golf"""
        ),
        ignore=words("""wagen es, wage es"""),
    ),
    "partner": Lexicon(
        triggers=words(
            """freund, freundin, partnerin, ehemann, ehefrau, mein mann, meinem mann, meinen mann, meine frau,
            meiner frau, verlobt, verlobte, verlobter, verheiratet, geheiratet, heirat, hochzeit, getrennt,
            trennung, geschieden, scheidung, beziehung, lebensgefährte, lebensgefährtin, bin single, mein ex,
            meine ex, schluss gemacht, zusammengezogen"""
        ),
        values=words("""verheiratet, verlobt, geschieden, verwitwet, ledig, getrennt lebend"""),
        ignore=words(
            """freundlich, freundlicherweise, freundschaft, freunde, freunden, freundeskreis, freundinnen,
            freundes, getrennt zahlen, getrennt durch, beziehung zwischen, beziehungsweise"""
        ),
    ),
    "pet": Lexicon(
        triggers=words(
            """hund, katze, haustier, haustiere, hunde, katzen, tierarzt, tierärztin, gassi, tierheim,
            adoptiert"""
        ),
        values=words(
            """hund, hunde, hündin, welpe, welpen, katze, katzen, kater, kätzchen, kaninchen, hamster,
            meerschweinchen, wellensittich, papagei, nymphensittich, schildkröte, gecko, bartagame, frettchen,
            goldfisch, chinchilla, ratte, ratten, pferd, pony, dackel, labrador, golden retriever,
            schäferhund, deutscher schäferhund, mops, französische bulldogge, bulldogge, pudel, beagle, corgi,
            husky, border collie, jack russell, terrier, chihuahua, zwergspitz, dobermann, rottweiler,
            maine coon, ragdoll, britisch kurzhaar, perserkatze, siamkatze"""
        ),
    ),
    "email": Lexicon(
        triggers=words("""e-mail-adresse, mailadresse, email-adresse, mail-adresse, postfach, e-mails"""),
        values=words("""gmx, web.de, t-online, posteo"""),
    ),
    "phone": Lexicon(
        triggers=words(
            """handy, nummer, handynummer, telefonnummer, telefon, festnetz, rufnummer, erreichbar unter,
            neue nummer"""
        ),
        ignore=words("""nummer eins, hausnummer, kundennummer, rechnungsnummer, versionsnummer"""),
    ),
    "money": Lexicon(
        triggers=words(
            """miete, gehalt, kaltmiete, warmmiete, nebenkosten, verdiene, verdienen, verdienst, lohn,
            stundenlohn, brutto, netto, einkommen, gehaltserhöhung, gespart, sparen, schulden, kredit,
            ich zahle, zahle ich, wir zahlen, bezahle, kostet mich, taschengeld, bafög, kindergeld, pro monat,
            pro stunde, im monat, rente"""
        ),
        ignore=words("""mieter, miete ein auto"""),
    ),
    "appointment": Lexicon(
        triggers=words(
            """termin, zahnarzt, arzttermin, beim arzt, zum arzt, hausarzt, hausärztin, frauenarzt,
            frauenärztin, augenarzt, zahnärztin, vorstellungsgespräch, bewerbungsgespräch, besprechung,
            untersuchung, impfung, friseurtermin, zum friseur, physiotherapie, gebucht, reserviert,
            reservierung, sprechstunde, verabredet"""
        ),
        ignore=words("""terminal, terminals, terminate, terminated, termination, terminology, terminieren"""),
    ),
    "study": Lexicon(
        triggers=words(
            """kurs, studium, studiere, kurse, studieren, studiert, studiengang, uni, universität, hochschule,
            fachhochschule, bachelor, master, masterarbeit, bachelorarbeit, promoviere, doktorarbeit,
            semester, prüfung, prüfungen, klausur, klausuren, ausbildung, weiterbildung, fortbildung,
            umschulung, abitur, abi, eingeschrieben, vorlesung, vorlesungen, fernstudium, abschluss,
            immatrikul, exmatrikul"""
        ),
        values=words(
            """bwl, vwl, jura, medizin, zahnmedizin, tiermedizin, informatik, wirtschaftsinformatik,
            maschinenbau, elektrotechnik, bauingenieurwesen, wirtschaftsingenieurwesen, mathe, mathematik,
            physik, chemie, biologie, psychologie, soziologie, philosophie, germanistik, anglistik,
            romanistik, politikwissenschaft, lehramt, pädagogik, erziehungswissenschaft, soziale arbeit,
            pharmazie, architektur, kommunikationsdesign, grafikdesign, kunstgeschichte, medienwissenschaft,
            journalismus, wirtschaftswissenschaften, sportwissenschaft, ernährungswissenschaft, linguistik,
            geschichtswissenschaft, diplom, staatsexamen, student, studentin"""
        ),
    ),
    "language": Lexicon(
        triggers=words(
            """lerne, lernen, lernt, sprachkurs, sprache, sprachen, spreche fliessend, fliessend,
            muttersprache, vokabeln, grammatik, sprachschule, volkshochschule, vhs, sprachtandem"""
        ),
        values=words(
            """englisch, deutsch, spanisch, französisch, italienisch, portugiesisch, niederländisch,
            holländisch, schwedisch, norwegisch, dänisch, finnisch, isländisch, polnisch, tschechisch,
            slowakisch, ungarisch, rumänisch, bulgarisch, griechisch, russisch, ukrainisch, serbisch,
            kroatisch, türkisch, arabisch, hebräisch, persisch, farsi, urdu, hindi, bengalisch, japanisch,
            koreanisch, chinesisch, mandarin, kantonesisch, vietnamesisch, thailändisch, thai, indonesisch,
            malaiisch, tagalog, suaheli, swahili, katalanisch, baskisch, galicisch, esperanto, latein,
            gebärdensprache, walisisch, irisch"""
        ),
        ignore=words(
            """programmiersprache, programmiersprachen, sprachmodell, sprachmodelle, sprachnachricht,
            sprachnachrichten, sprachassistent"""
        ),
    ),
    "hobby": Lexicon(
        triggers=words(
            """hobby, verein, hobbys, freizeit, in meiner freizeit, training, trainiere, mannschaft, sport,
            sportart, fitnessstudio, mitglied im, mitglied in"""
        ),
        values=words(
            """bouldern, klettern, joggen, marathon, halbmarathon, schwimmen, radfahren, rennrad,
            mountainbike, wandern, yoga, pilates, fitness, krafttraining, crossfit, boxen, kampfsport, karate,
            judo, fechten, rudern, segeln, surfen, skifahren, snowboarden, tanzen, salsa, tango, ballett,
            fussball, handball, basketball, volleyball, tennis, tischtennis, padel, badminton, golf, reiten,
            schach, gitarre, klavier, geige, schlagzeug, cello, singen, chor, töpfern, töpferkurs, keramik,
            stricken, häkeln, nähen, malen, zeichnen, aquarell, fotografie, fotografieren, gärtnern, backen,
            angeln, theater, improtheater, impro, schauspiel, brettspiele, zocken, videospiele, meditation,
            ehrenamt, imkern, modellbau, laufgruppe, lauftreff"""
        ),
        ignore=words(
            """trainingsdaten, training des modells, vereinbart, vereinbaren, vereinbarung, vereinfacht,
            vereinfachen, vereinigt, vereinzelt"""
        ),
    ),
    "favourite": Lexicon(
        triggers=words("""lieblings, farbe, am liebsten, mag ich am meisten"""),
        values=words(
            """blau, dunkelblau, hellblau, marineblau, navy, rot, dunkelrot, weinrot, bordeauxrot, grün,
            dunkelgrün, hellgrün, olivgrün, mintgrün, salbeigrün, flaschengrün, gelb, senfgelb, orange, rosa,
            pink, lila, violett, schwarz, grau, braun, beige, türkis, terrakotta, terracotta, creme,
            cremeweiss"""
        ),
    ),
    "tool": Lexicon(
        triggers=words(
            """benutze, benutzt, nutze jetzt, nutze seit, umgestiegen auf, gewechselt zu, tabellenkalkulation,
            betriebssystem, notiz-app, notizen-app"""
        ),
        ignore=words("""benutzer, benutzerin, benutzername, benutzeroberfläche"""),
    ),
    "trip": Lexicon(
        triggers=words(
            """wir fliegen, ich fliege, fliegen wir, urlaub, reise, reisen, verreisen, fliege nach,
            fliegen nach, flug, flüge, ferien, auslandsaufenthalt, städtetrip, kurztrip, roadtrip, rundreise,
            backpacking, hotel, ferienwohnung, ausflug, flitterwochen, kreuzfahrt, wir fahren nach,
            ich fahre nach, geht nach, es geht nach, trip nach"""
        ),
        ignore=words("""nach hause"""),
    ),
}
