"""French: the words that tell what kind of sentence a person says."""

from __future__ import annotations

from typing import Final

from .._tables import Saying

SAYING: Final = Saying(
    code="fr",
    spaced=True,
    first_person=(
        "je",
        "j'",
        "j’",
        "moi",
        "mon",
        "ma",
        "mes",
        "me",
        "m'",
        "m’",
        "nous",
        "notre",
        "nos",
        "suis",
        "ai",
    ),
    others=(
        "ma sœur",
        "ma soeur",
        "mon frère",
        "ma mère",
        "ma maman",
        "mon père",
        "mon papa",
        "mon fils",
        "ma fille",
        "ma femme",
        "mon mari",
        "mon copain",
        "ma copine",
        "mon ami",
        "mon amie",
        "mon collègue",
        "ma collègue",
        "mon chef",
        "ma cheffe",
        "mon patron",
        "ma patronne",
        "mon voisin",
        "ma voisine",
        "mon cousin",
        "ma cousine",
        "mon oncle",
        "ma tante",
        "ma grand-mère",
        "mon grand-père",
        "mon coloc",
        "ma coloc",
        "mon colocataire",
        "mon propriétaire",
        "ma propriétaire",
        "mon chien",
        "mon chat",
        "notre chien",
        "notre chat",
        "le chien",
        "le chat",
        "le vétérinaire",
        "le proprio",
        "le propriétaire",
        "il",
        "elle",
        "ils",
        "elles",
        "son",
        "sa",
        "ses",
        "leur",
        "leurs",
        "quelqu'un",
    ),
    question_starts=(
        "est-ce",
        "est ce",
        "qu'est-ce",
        "quoi",
        "où",
        "quand",
        "comment",
        "pourquoi",
        "quel",
        "quelle",
        "quels",
        "quelles",
        "qui",
        "dois-je",
        "devrais-je",
        "puis-je",
        "peux-tu",
        "tu penses",
        "vaut-il",
        "faut-il",
        "y a-t-il",
    ),
    hypothetical=(
        "si",
        "supposons",
        "imagine",
        "imaginons",
        "hypothétiquement",
        "en théorie",
        "serait",
        "seraient",
        "pourrait",
        "pourrais",
        "peut-être",
        "éventuellement",
        "je rêve",
        "je pense à",
        "j'envisage",
        "j’envisage",
        "envisager",
        "au cas où",
    ),
    plan=(
        "je vais",
        "on va",
        "nous allons",
        "je compte",
        "je prévois",
        "j'aimerais",
        "j’aimerais",
        "je voudrais",
        "un jour",
    ),
    past=(
        "avant",
        "autrefois",
        "jadis",
        "à l'époque",
        "à l’époque",
        "il y a des années",
        "quand j'étais",
        "quand j’étais",
        "dans le temps",
    ),
    reported=(
        "a dit",
        "dit",
        "m'a dit",
        "m’a dit",
        "a écrit",
        "écrit",
        "m'a écrit",
        "m’a écrit",
        "selon",
        "citation",
        "raconte",
        "a raconté",
    ),
    joke=(
        "blague",
        "je rigole",
        "je plaisante",
        "pour rire",
        "mdr",
        "lol",
        "dans mon roman",
        "dans le roman",
        "dans le livre",
        "dans le film",
        "mon personnage",
    ),
    update=(
        "maintenant",
        "désormais",
        "dorénavant",
        "plus",
        "ne plus",
        "au lieu de",
        "à la place",
        "changé",
        "déménagé",
        "déménage",
        "nouveau",
        "nouvelle",
        "de nouveau",
        "à nouveau",
        "arrêté",
        "commencé",
        "depuis",
        "enfin",
        "finalement",
        "mise à jour",
        "de retour",
        "revenu",
        "revenue",
        "vendu",
        "acheté",
        "passé à",
        "changement de programme",
        "à partir de",
        "augmenté",
        "baissé",
        "du coup",
        "devenu",
        "devenue",
        "reporté",
        "décalé",
    ),
    retraction=(
        "en fait",
        "correction",
        "coquille",
        "faute de frappe",
        "erreur",
        "je me suis trompé",
        "je me suis trompée",
        "je voulais dire",
        "pardon",
        "désolé",
        "désolée",
        "faux",
        "confondu",
        "oups",
        "attends",
    ),
    negation=("ne", "n'", "n’", "pas", "plus", "jamais", "aucun", "aucune", "rien"),
    addition=(
        "aussi",
        "également",
        "en plus",
        "un autre",
        "une autre",
        "deuxième",
        "second",
        "seconde",
        "les deux",
    ),
    time=tuple(
        """aujourd'hui demain hier soir matin nuit jour jours journée semaine semaines week-end mois an ans
        année années temps fois depuis jusqu'à lundi mardi mercredi jeudi vendredi samedi dimanche
        janvier février mars avril mai juin juillet août septembre octobre novembre décembre heure
        heures minutes prochain prochaine dernier dernière""".split()
    ),
    calendar=tuple(
        """lundi mardi mercredi jeudi vendredi samedi dimanche janvier février mars avril mai juin juillet
        août septembre octobre novembre décembre""".split()
    ),
    stop=frozenset(
        """lol mdr ptdr bref ben bah hein genre le la les un une des du de d' d’ et ou mais que qui à au aux en dans sur pour par avec sans sous
        est sont était été suis es sommes ai as a avons ont je tu il elle on nous vous ils elles me te se
        mon ma mes ton ta tes son sa ses ce cet cette ces y ne pas plus très bien tout tous toute aussi
        comme quand où quoi c' c’ l' l’ j' j’ n' n’ s' s’ qu' qu’""".split()
    ),
)


from .._lexicon import Lexicon, words  # noqa: E402  (the table of facts came after the table of sentences)

# The table of facts (`_facts`): for each attribute of a person's life, the everyday French that says a
# sentence is about it and the words that are a value of it, the feminine beside the masculine
# ("végétarien", "végétarienne"), an elided article left off ("l'italien": "italien"); names written alike
# in every language are in `en`.
FACTS: Final[dict[str, Lexicon]] = {
    "residence": Lexicon(
        triggers=words(
            """habite, habitons, déménag, appartement, adresse, habiter, j'habite, on habite, je vis à,
            on vit à, nous vivons à, vivre à, appart, logement, colocation, coloc, colocataire, propriétaire,
            proprio, quartier, code postal, installé à, installée à, installés à, de retour à, maison à,
            ma maison, emménag, nouvel appart, nouvel appartement, nouveau logement"""
        ),
        ignore=words(
            """adresse mail, adresse e-mail, adresse email, adresse ip, appartient, appartiennent, appartenir,
            appartenance, appartenait"""
        ),
    ),
    "job": Lexicon(
        triggers=words(
            """travaille comme, poste, métier, boulot, travaille en tant que, profession, emploi, nouveau job,
            nouveau travail, démission, démissionné, licencié, licenciée, licenciement, chômage, promu,
            promue, cdi, cdd, intérim, un stage, mon stage, en stage, stage chez, alternance, freelance,
            indépendant, indépendante, auto-entrepreneur, auto-entrepreneuse, à la retraite, mi-temps,
            temps partiel, temps plein, reconversion, mon taf"""
        ),
        values=words(
            """infirmier, infirmière, aide-soignant, aide-soignante, sage-femme, pharmacien, pharmacienne,
            kinésithérapeute, psychologue, orthophoniste, éducateur, éducatrice, assistant social,
            assistante sociale, enseignant, enseignante, professeur, professeure, prof, instituteur,
            institutrice, professeur des écoles, formateur, formatrice, développeur, développeuse,
            développeur web, développeuse web, programmeur, programmeuse, ingénieur, ingénieure,
            ingénieur logiciel, analyste, analyste de données, chef de projet, cheffe de projet,
            chef de produit, cheffe de produit, graphiste, architecte, avocat, avocate, juriste, notaire,
            comptable, expert-comptable, experte-comptable, consultant, consultante, conseillère,
            conseiller clientèle, conseiller bancaire, conseillère bancaire, banquier, banquière, caissier,
            caissière, vendeur, vendeuse, serveuse, barman, barmaid, cuisinier, chef cuisinier, boulanger,
            boulangère, pâtissier, pâtissière, boucher, bouchère, coiffeur, coiffeuse, esthéticienne,
            femme de ménage, agent d'entretien, nounou, assistante maternelle, auxiliaire de vie, secrétaire,
            assistante, assistante de direction, réceptionniste, hôtesse d'accueil, fonctionnaire, policier,
            policière, gendarme, pompier, militaire, électricien, électricienne, plombier, menuisier, maçon,
            mécanicien, mécanicienne, chauffeur, livreur, livreuse, chauffeur-livreur, magasinier, cariste,
            manutentionnaire, ouvrier, ouvrière, agriculteur, agricultrice, journaliste, rédacteur,
            rédactrice, traducteur, traductrice, photographe, artiste, musicien, musicienne, comédien,
            comédienne, acteur, actrice, chercheur, chercheuse, doctorant, doctorante, étudiant, étudiante,
            stagiaire, alternant, alternante, apprenti, apprentie, agent immobilier, pilote de ligne,
            hôtesse de l'air, steward, chômeur, chômeuse, retraité, retraitée, directeur, directrice, gérant,
            gérante, infirmier libéral, infirmière libérale"""
        ),
        ignore=words(
            """poste de travail, la poste, poster, posted, posting, postgres, postgresql, posté, postée,
            en tant que tel, en tant que telle, emploi du temps, indépendant de, indépendante de"""
        ),
    ),
    "employer": Lexicon(
        triggers=words(
            """travaille chez, entreprise, boîte, bosse chez, embauché, embauchée, employeur, société, agence,
            recruté, recrutée, j'ai rejoint, je rejoins, commence chez, commencé chez, travaillant chez"""
        ),
        values=words("""start-up, fonction publique, cabinet d'avocats, cabinet de conseil"""),
        ignore=words("""boîte mail, boîte aux lettres, boîte de réception, boîte de nuit"""),
    ),
    "diet": Lexicon(
        triggers=words(
            """végétarien, végane, viande, je mange, manger de la, régime, alimentation, produits laitiers,
            gluten, lactose, ne mange plus, je ne mange pas"""
        ),
        values=words(
            """végétarien, végétarienne, végétariens, végétariennes, végane, véganes, végan, végans,
            végétalien, végétalienne, pescétarien, pescétarienne, pescetarien, pescetarienne, flexitarien,
            flexitarienne, omnivore, cétogène, régime cétogène, keto, sans gluten, cœliaque, coeliaque,
            sans lactose, intolérant au lactose, intolérante au lactose, halal, casher, kasher, paléo,
            jeûne intermittent, crudivore, sans viande"""
        ),
    ),
    "drink": Lexicon(
        triggers=words("""café, thé, je bois, boire, boisson, caféine, tasse de"""),
        values=words(
            """café, café noir, café allongé, expresso, espresso, ristretto, café noisette, café crème,
            café au lait, capuccino, café filtre, déca, décaféiné, thé, thé vert, thé noir, thé glacé,
            thé au jasmin, tisane, infusion, verveine, camomille, matcha, chaï, chocolat chaud, jus,
            jus d'orange, jus de pomme, eau pétillante, eau gazeuse, limonade, diabolo, boisson énergisante,
            bière, bière sans alcool, panaché, vin, vin rouge, vin blanc, rosé, cidre, pastis, kir, spritz,
            lait d'avoine, lait de soja, lait d'amande, sans alcool"""
        ),
        ignore=words("""café-restaurant"""),
    ),
    "car": Lexicon(
        triggers=words(
            """voiture, bagnole, je conduis, conduire, permis de conduire, mon permis, le permis,
            voiture électrique, voiture hybride, leasing, lld, loa"""
        ),
        values=words(
            """renault clio, renault zoé, renault twingo, peugeot 108, peugeot 206, peugeot 207, 2cv,
            deux-chevaux, citroën c4, citroën ds, dacia spring, dacia jogger"""
        ),
        ignore=words("""permis de travail, permis de séjour"""),
    ),
    "partner": Lexicon(
        triggers=words(
            """copain, copine, mon copain, ma copine, petit ami, petite amie, mon mec, ma meuf, mon mari,
            ma femme, mon époux, mon épouse, conjoint, conjointe, compagnon, compagne, fiancé, fiancée, pacs,
            mariage, divorce, rupture, on a rompu, on s'est séparés, en couple, mon ex, mon chéri,
            ma chérie"""
        ),
        values=words(
            """marié, mariée, pacsé, pacsée, célibataire, divorcé, divorcée, veuf, veuve, en couple, fiancé,
            fiancée"""
        ),
        ignore=words("""copains, copines, séparé par, séparés par, séparées par, rupture de stock"""),
    ),
    "pet": Lexicon(
        triggers=words(
            """chien, mon chat, le chat, un chat, notre chat, mes chats, les chats, des chats, deux chats,
            animal de compagnie, animaux de compagnie, mon animal, vétérinaire, véto, adopté, adoptée, refuge,
            toutou, minou"""
        ),
        values=words(
            """chien, chienne, chiens, chiot, chiots, mon chat, chaton, chatons, lapin, lapine, hamster,
            cochon d'inde, cobaye, perroquet, perruche, canari, tortue, poisson rouge, furet, chinchilla,
            serpent, lézard, cheval, poney, berger allemand, bouledogue français, teckel, caniche, carlin,
            chat de gouttière, berger australien"""
        ),
    ),
    "email": Lexicon(
        triggers=words(
            """courriel, adresse mail, adresse e-mail, adresse email, mon mail, mél, boîte mail,
            boîte de réception"""
        ),
        values=words("""laposte.net, orange.fr, free.fr, sfr.fr"""),
    ),
    "phone": Lexicon(
        triggers=words(
            """numéro, portable, téléphone, mon numéro, numéro de téléphone, numéro de portable, tél,
            nouveau numéro, ligne fixe"""
        ),
        ignore=words(
            """numéro de version, numéro de page, numéro de ligne, numéros, ordinateur portable, pc portable,
            portable code"""
        ),
    ),
    "money": Lexicon(
        triggers=words(
            """loyer, salaire, je gagne, payé, payée, paie, paye, revenu, revenus, charges, économies,
            épargne, dette, dettes, crédit, prêt immobilier, emprunt, augmentation de salaire, brut, par mois,
            smic, net par mois, rémunération, facture, factures, apl, mutuelle, impôts"""
        ),
        ignore=words(
            """revenu à, revenue à, revenu de, revenue de, revenu au, revenue au, charges de travail"""
        ),
    ),
    "appointment": Lexicon(
        triggers=words(
            """rendez-vous, dentiste, rdv, rendez vous, médecin, chez le médecin, généraliste, kiné,
            chez le coiffeur, entretien, entretien d'embauche, réunion, visite médicale, ophtalmo, gynéco,
            dermato, vaccin, prise de sang, réservé, réservée, réservation, reporté, décalé"""
        ),
        ignore=words("""entretien de la voiture, frais d'entretien"""),
    ),
    "study": Lexicon(
        triggers=words(
            """cours, master, fac, études, étudie, étudier, université, fac de, école de, licence, bts, dut,
            iut, prépa, doctorat, thèse, partiels, examen, examens, semestre, inscrit à la fac,
            inscrite à la fac, formation, diplôme, bac, cursus, mooc, école d'ingénieur, école de commerce"""
        ),
        values=words(
            """fac de droit, études de droit, licence de droit, master de droit, en droit, médecine, économie,
            informatique, mathématiques, chimie, biologie, psychologie, psycho, sociologie, philosophie,
            philo, lettres modernes, langues étrangères appliquées, llce, sciences po, sciences politiques,
            arts plastiques, staps, soins infirmiers, journalisme, ingénierie, génie civil,
            génie informatique, sciences de l'éducation, linguistique, bts, dut, doctorat, bac+2, bac+3,
            bac+5, école d'ingénieur, école de commerce, étudiant, étudiante"""
        ),
        ignore=words(
            """au cours de, en cours, cours d'eau, en cours de, le cours de l'action, faire les courses,
            fait les courses, les courses, licence mit, licence logicielle, licence gpl, driving licence,
            licence plate, software licence, licence key, bac à sable"""
        ),
    ),
    "language": Lexicon(
        triggers=words(
            """apprends, j'apprends, apprendre, apprentissage, langue, langues, cours d'anglais,
            cours de langue, parle couramment, couramment, bilingue, langue maternelle, tandem,
            échange linguistique"""
        ),
        values=words(
            """anglais, français, espagnol, allemand, italien, portugais, néerlandais, hollandais, suédois,
            norvégien, danois, finnois, finlandais, islandais, polonais, tchèque, slovaque, hongrois, roumain,
            bulgare, grec, russe, ukrainien, serbe, croate, turc, arabe, hébreu, persan, farsi, ourdou, hindi,
            bengali, japonais, coréen, chinois, mandarin, cantonais, vietnamien, thaï, thaïlandais,
            indonésien, malais, tagalog, swahili, catalan, basque, breton, occitan, espéranto, latin,
            langue des signes, lsf"""
        ),
        ignore=words("""langage de programmation, langue de bois, apprentissage automatique"""),
    ),
    "hobby": Lexicon(
        triggers=words(
            """cours de, loisir, loisirs, passe-temps, temps libre, je me suis mis à, je me suis mise à,
            inscrit à, inscrite à, je fais du, je fais de la, entraînement, m'entraîne, salle de sport,
            salle de gym, club de, une association, dans une association"""
        ),
        values=words(
            """escalade, randonnée, rando, course à pied, footing, semi-marathon, natation, vélo, cyclisme,
            vtt, musculation, muscu, boxe, boxe thaï, arts martiaux, karaté, escrime, aviron, plongée, ski,
            patinage, roller, jouer au foot, faire du basket, jouer au basket, handball, volley, tennis,
            padel, pétanque, échecs, guitare, violon, chant, chorale, danse, théâtre, impro, improvisation,
            poterie, céramique, tricot, couture, broderie, peinture, aquarelle, dessin, photographie,
            jardinage, potager, pâtisserie, bénévolat, méditation, jeux vidéo, jeux de société"""
        ),
        ignore=words(
            """au cours de, en cours de, en cours, cours de l'action, cours de bourse, cours du dollar"""
        ),
    ),
    "favourite": Lexicon(
        triggers=words(
            """préféré, préférée, couleur, préférés, préférées, favori, mon préféré, ma préférée"""
        ),
        values=words(
            """bleu, bleu marine, bleu ciel, bleu foncé, bleu clair, bleu canard, rouge, vert, vert sapin,
            vert olive, vert d'eau, vert foncé, kaki, jaune, jaune moutarde, orange, rose, rose poudré,
            fuchsia, violet, lilas, mauve, noir, blanc, gris, marron, brun, beige, turquoise, terracotta,
            terre cuite, doré, argenté"""
        ),
    ),
    "tool": Lexicon(
        triggers=words(
            """utilise, j'utilise, je me sers de, je suis passé à, je suis passée à, logiciel, une appli,
            l'appli, mon appli, appli de, l'application, tableur, traitement de texte, navigateur,
            système d'exploitation"""
        ),
        ignore=words("""utilisateur, utilisatrice, utilisateurs, utilisation"""),
    ),
    "trip": Lexicon(
        triggers=words(
            """voyage, vacances, voyager, voyages, je pars à, je pars en, on part à, on part en, partir en,
            vol pour, billet d'avion, billets d'avion, séjour, week-end à, escapade, road trip, roadtrip,
            lune de miel, croisière, hôtel, itinéraire, congés, passeport, en vacances"""
        ),
    ),
}
