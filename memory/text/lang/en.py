"""English: the words of a coding session's turns that say what kind of sentence each is."""

from __future__ import annotations

from typing import Final

from .._tables import Saying

# An assistant turn that only says what it is about to do, or that a step went well: "Let me look at the
# router:", "Now I'll run the tests.", "Perfect!". Matched at the turn's start, case-insensitively.
NARRATION_OPENERS: Final = (
    "let me", "let's", "now let me", "now let's", "now i", "now,", "i'll", "i will", "i'm going to",
    "i am going to", "i need to", "i see", "first,", "first let me", "next,", "next let me", "then",
    "perfect", "great", "excellent", "good", "done", "ok", "okay", "alright", "all right", "awesome",
    "nice", "looks good", "you're absolutely right", "you are absolutely right", "you're right",
    "now", "finally", "i can see", "i found", "found it", "got it", "thanks", "the file", "the test",
)  # fmt: skip

# A sentence the person says to set how the work is done (a convention, an order that stands), not a task
# of the moment: a negation ("don't", "no console logs"), a standing word ("always", "from now on"), or
# a choice ("use X", "instead of", "prefer").
INSTRUCTION_STARTS: Final = (
    "don't", "do not", "dont", "never", "no ", "avoid", "stop ", "please don't", "please do not",
    "always", "make sure", "be sure", "remember to", "remember that", "from now on", "going forward",
    "use ", "please use", "prefer", "keep ", "only ", "we use", "we always", "we never", "we don't",
    "i want", "i'd like", "i would like", "i prefer", "i'd prefer", "i like", "i don't like",
    "i don't want", "i do not want", "let's always", "let's not", "let's use", "must ", "you must",
    "you should", "you shouldn't", "should ", "shouldn't", "it should", "they should", "each ", "every ",
)  # fmt: skip
INSTRUCTION_WORDS: Final = (
    "always", "never", "from now on", "instead of", "rather than", "make sure", "don't", "do not",
    "should", "shouldn't", "must", "mustn't", "no need to", "prefer", "not allowed", "is allowed",
    "every time", "whenever", "by default",
)  # fmt: skip

# A sentence that states a choice made and, often, why.
DECISION_WORDS: Final = (
    "decided", "decision", "we chose", "i chose", "chosen", "going with", "opted", "settled on",
    "instead of", "rather than", "switched to", "in favor of", "in favour of", "trade-off", "tradeoff",
    "the approach is", "the approach was", "won't use", "will not use", "avoid using", "better than",
    "prefer", "preferred",
)  # fmt: skip

# A sentence that says something did not work.
FAILED_WORDS: Final = (
    "didn't work", "did not work", "doesn't work", "does not work", "not working", "won't work",
    "failed to", "fails to", "still fails", "still failing", "still broken", "no luck", "gave up",
    "abandon", "reverted", "revert ", "rolled back", "that approach", "can't", "cannot", "unable to",
)  # fmt: skip

# A sentence that explains a problem's cause.
CAUSE_WORDS: Final = (
    "the issue", "the problem", "the cause", "the error", "because", "caused by", "is due to", "was due to",
    "root cause", "the bug", "the reason", "this means", "that's why", "which is why", "turns out",
    "the fix", "fixed by", "the culprit",
)  # fmt: skip

# A sentence of a summary that leaves something for later.
OPEN_WORDS: Final = (
    "next step", "next steps", "remaining", "still need", "still needs", "todo", "to do", "left to",
    "not yet", "follow-up", "follow up", "later", "pending", "open question", "outstanding",
)  # fmt: skip

# Words that say nothing of what a text is about: function words, the speakers' labels a claim quotes
# with, narration and the most general words of a working session.
STOPWORDS: Final = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers him his how i if in into is it its itself just me more most my no nor not
    now of off on once only or other our ours out over own same she should so some such than that the
    their theirs them then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours user assistant tool agent
    let lets let's now then also just okay ok sure yes yeah perfect great good excellent done need needs
    want wants like make makes made look looks looking check checking see run runs running use used using
    file files code line lines test tests change changes update updated fix fixed add added work works
    thing things something well first next last still really actually already going into onto within
    without there here this that these those very much many more most some such only other another every
    each same different new old true false none null return returns lol haha ugh pls ty thx omg btw tbh idk
    hmm sorry got""".split()
)  # fmt: skip

# The function words a search index leaves out (`_terms`): NLTK's English list, measured on LoCoMo (+3.8
# points of all@10 over a 33-word list).
INDEX_STOPWORDS: Final = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he
    him his himself she she's her hers herself it it's its itself they them their theirs themselves what which
    who whom this that that'll these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about against between into through
    during before after above below to from up down in out on off over under again further then once here
    there when where why how all any both each few more most other some such no nor not only own same so than
    too very s t can will just don don't should should've now d ll m o re ve y ain aren aren't couldn
    couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't
    mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn
    wouldn't""".split()
)
# The words a query says "I" with (`_terms`): asked "where did I park?", it asks about the person.
FIRST_PERSON_WORDS: Final = frozenset({"i", "me", "my", "mine", "myself"})

# Words of a working session too general to name a page: measured on 15 real coding-agent sessions of three
# projects (the words in at least 60 % of the sessions and in every project: "test", "file", "function",
# "changes", "fix", "message", "data", "project", "summary", ...), and the vocabulary of any codebase beside
# them. A page is named by what it is about: a file, a module, a name.
WORK_GENERIC: Final = frozenset(
    """add added adding change changes changed check checks checking code codes command commands complete
    completed create created current data error errors file files first fix fixes fixed fixing function
    functions html issue issues message messages name names new project projects run runs running summary
    test tests testing update updates updated use used uses using user working work works method methods
    class classes module modules component components template templates config configuration setting
    settings option options feature features task tasks step steps bug bugs build builds script scripts tool
    tools call calls handler handlers helper helpers util utils logic implementation approach scenario
    scenarios suite case cases existing line lines output input result results value values type types
    diff edit edits write read pass passes passed fail fails failed failure failures debug debugging log logs
    item items list lists field fields param params parameter parameters argument arguments return returns
    string strings object objects array arrays number numbers version versions directory folder path paths
    repo repository commit commits branch branches main problem problems solution solutions thing things
    stuff way ways part parts place places point points section sections page pages view views state
    status event events process processes time times done full instead simple specific failing formatted
    functionality codebase support""".split()
)  # fmt: skip

SAYING: Final = Saying(
    code="en",
    spaced=True,
    asks_past=("did", "was", "were", "ever", "had", "been", "used to"),
    addressee=("you", "your"),
    first_person=(
        "i",
        "i'm",
        "i've",
        "i'd",
        "i'll",
        "im",
        "ive",
        "my",
        "me",
        "mine",
        "myself",
        "we",
        "we're",
        "we've",
        "our",
        "ours",
        "us",
    ),
    others=(
        "my sister",
        "my brother",
        "my mother",
        "my mom",
        "my mum",
        "my father",
        "my dad",
        "my son",
        "my daughter",
        "my wife",
        "my husband",
        "my partner",
        "my girlfriend",
        "my boyfriend",
        "my friend",
        "my best friend",
        "my colleague",
        "my coworker",
        "my boss",
        "my manager",
        "my neighbour",
        "my neighbor",
        "my cousin",
        "my uncle",
        "my aunt",
        "my grandma",
        "my grandmother",
        "my grandpa",
        "my grandfather",
        "my roommate",
        "my flatmate",
        "my kid",
        "my kids",
        "my landlord",
        "my landlady",
        "my dog",
        "my cat",
        "our dog",
        "our cat",
        "the dog",
        "the cat",
        "the vet",
        "the landlord",
        "he",
        "she",
        "they",
        "his",
        "her",
        "their",
        "he's",
        "she's",
        "they're",
        "everyone",
        "someone",
    ),
    question_starts=(
        "do",
        "does",
        "did",
        "is",
        "are",
        "was",
        "were",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "have",
        "has",
        "what",
        "what's",
        "where",
        "where's",
        "when",
        "when's",
        "why",
        "how",
        "how's",
        "which",
        "who",
        "who's",
        "whose",
        "any idea",
        "any tips",
        "thoughts on",
        "wonder if",
        "wondering if",
        "not sure if",
        "is it",
        "should i",
    ),
    hypothetical=(
        "if",
        "suppose",
        "supposing",
        "imagine",
        "hypothetically",
        "what if",
        "would",
        "wouldn't",
        "could",
        "might",
        "maybe",
        "perhaps",
        "in theory",
        "let's say",
        "say i",
        "wish",
        "dream of",
        "dreaming of",
        "thinking of",
        "thinking about",
        "considering",
        "unless",
    ),
    plan=(
        "going to",
        "gonna",
        "plan to",
        "planning to",
        "planning on",
        "intend to",
        "hope to",
        "hoping to",
        "will",
        "i'll",
        "someday",
        "one day",
        "about to",
        "eventually",
        "thinking of",
        "thinking about",
        "considering",
    ),
    past=(
        "used to",
        "back then",
        "back in the day",
        "years ago",
        "when i was",
        "formerly",
        "previously",
        "in the past",
        "once upon",
        "i lived",
        "i worked",
        "as a student",
        "as a kid",
        "as a child",
        "growing up",
    ),
    reported=(
        "said",
        "says",
        "told me",
        "tells me",
        "wrote",
        "writes",
        "texted",
        "emailed",
        "according to",
        "claims",
        "claimed",
        "asked me",
        "quote",
        "quoted",
        "got this from",
    ),
    joke=(
        "jk",
        "just kidding",
        "kidding",
        "joking",
        "lol jk",
        "haha jk",
        "in my novel",
        "in the novel",
        "in my story",
        "in the book",
        "in the film",
        "in the movie",
        "my character",
        "roleplay",
        "pretend",
    ),
    update=(
        "now",
        "anymore",
        "any more",
        "no longer",
        "instead",
        "switched",
        "changed",
        "moved",
        "relocated",
        "quit",
        "started",
        "new",
        "these days",
        "nowadays",
        "from now on",
        "finally",
        "update",
        "back in",
        "back to",
        "gone",
        "became",
        "become",
        "dropped",
        "stopped",
        "gave up",
        "left",
        "replaced",
        "scrapped",
        "sold",
        "got a",
        "got an",
        "change of plan",
        "not anymore",
        "as of",
        "turned",
        "up to",
        "down to",
        "raised",
        "lowered",
        "moved to",
        "rescheduled",
        "is over",
        "it's over",
        "done with",
        "joined",
        "signed up",
        "took up",
        "picked up",
        "died",
        "passed away",
        "broke up",
        "split up",
        "we separated",
        "rehomed",
    ),
    retraction=(
        "actually",
        "correction",
        "typo",
        "i meant",
        "i mean",
        "my mistake",
        "my bad",
        "wrong",
        "scratch that",
        "not true",
        "misspoke",
        "oops",
        "wait,",
        "wait no",
        "got it wrong",
        "mistyped",
        "mixed up",
        "to correct",
    ),
    negation=(
        "not",
        "no",
        "never",
        "don't",
        "doesn't",
        "didn't",
        "isn't",
        "aren't",
        "wasn't",
        "haven't",
        "hasn't",
        "won't",
        "can't",
        "cannot",
        "no longer",
        "none",
    ),
    addition=("also", "too", "as well", "another", "additionally", "in addition", "second", "both"),
    time=tuple(
        """today tomorrow yesterday tonight morning mornings evening evenings night nights afternoon day
        days week weeks weekend weekends month months year years time times ago since until monday
        tuesday wednesday thursday friday saturday sunday january february march april june july august
        september october november december jan feb mar apr jun jul aug sep sept oct nov dec hour hours
        minute minutes""".split()
    ),
    calendar=tuple(
        """monday tuesday wednesday thursday friday saturday sunday january february march april may june
        july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec tues weds thurs fri""".split()
    ),
    stop=STOPWORDS,
)


from .._lexicon import Lexicon, words  # noqa: E402  (the table of facts came after the table of sentences)

# The table of facts (`_facts`): for each attribute of a person's life, the everyday English that says a
# sentence is about it, the words that are a value of it, and the phrases that hold a trigger of it without
# being about it. Names written alike in every language (car makes and models, apps, breeds of dog) are
# given here once.
FACTS: Final[dict[str, Lexicon]] = {
    "residence": Lexicon(
        triggers=words(
            """live, living, lived, relocat, moved, move to, moving to, flat, apartment, address, based in,
            back in, home in, house in, my house, new house, new place, my place, renting, landlord, landlady,
            lease, neighbourhood, neighborhood, postcode, post code, zip code, suburb, condo, house share,
            houseshare, roommate, settled in, home is, moving house, move house, moving out, moved out,
            moved back, move back, moving back, moved in, moving in, emigrat, immigrat, expat, relocation"""
        ),
        ignore=words(
            """got moved, been moved, was moved, were moved, is moved, gets moved, flat white, flat whites,
            flat rate, flat fee, flat tyre, flat tire, flat out, flat screen, flat-pack, flat pack,
            flat design, flat list, flat file, flat structure, live music, live stream, livestream,
            live-stream, live demo, live chat, go live, goes live, went live, live show, live coding,
            live server, live reload, live site, live version, live environment, live data,
            live in the moment, live with it, live without, for a living, cost of living, back in the day,
            back in time, log back in, logged back in, sign back in, signed back in, back in stock,
            back in touch, moved on, moved the, moved it, moved them, move to the next, move to step,
            moving to the next, email address, e-mail address, ip address, mac address, web address,
            address the, address this, address that, address it, lease time"""
        ),
    ),
    "job": Lexicon(
        triggers=words(
            """work as, working as, job, role, position, notice, hired, analyst, engineer, developer, teacher,
            nurse, manager, designer, consultant, career, work in, i work, promoted, promotion, new job,
            quit my, resign, fired, laid off, redundan, unemployed, self-employed, freelanc, internship,
            night shift, my shift, shifts, part-time, part time, full-time, full time, occupation, profession,
            career change, retired, retire, maternity leave, paternity leave, training as, retrain,
            qualified as, day job, line of work, for a living, for work"""
        ),
        values=words(
            """nurse, staff nurse, nurse practitioner, midwife, paramedic, pharmacist, physiotherapist,
            occupational therapist, psychologist, social worker, carer, care worker, care assistant,
            healthcare assistant, caregiver, surgeon, physician, junior doctor, dental nurse,
            dental hygienist, teacher, primary teacher, primary school teacher, secondary teacher,
            secondary school teacher, supply teacher, teaching assistant, tutor, lecturer, professor,
            researcher, postdoc, phd student, student, software engineer, software developer, developer,
            programmer, web developer, frontend developer, front-end developer, backend developer,
            back-end developer, full-stack developer, full stack developer, data scientist, data analyst,
            data engineer, analyst, business analyst, financial analyst, ml engineer,
            machine learning engineer, devops engineer, qa engineer, test engineer, engineer, civil engineer,
            mechanical engineer, electrical engineer, architect, software architect, product manager,
            project manager, program manager, programme manager, engineering manager, team lead, tech lead,
            cto, ceo, founder, co-founder, designer, ux designer, ui designer, graphic designer,
            product designer, ux researcher, copywriter, freelance writer, technical writer, content writer,
            journalist, translator, marketing manager, marketer, social media manager, content creator,
            recruiter, hr manager, hr advisor, consultant, accountant, bookkeeper, auditor, actuary, lawyer,
            solicitor, barrister, paralegal, attorney, banker, cashier, sales assistant, shop assistant,
            retail assistant, store manager, sales rep, salesperson, account manager,
            customer service advisor, receptionist, secretary, personal assistant, office manager,
            admin assistant, administrative assistant, civil servant, police officer, firefighter, soldier,
            electrician, plumber, carpenter, mechanic, delivery driver, bus driver, taxi driver, lorry driver,
            truck driver, uber driver, courier, postman, warehouse operative, warehouse worker, barista,
            waiter, waitress, bartender, chef, line cook, kitchen porter, baker, butcher, hairdresser, barber,
            nanny, childminder, au pair, estate agent, real estate agent, airline pilot, flight attendant,
            cabin crew, photographer, artist, musician, actress, freelancer, stay-at-home mum,
            stay-at-home mom, stay-at-home dad, homemaker, intern, apprentice, trainee, scientist, chemist,
            biologist, lab technician, technician, sysadmin, librarian, security guard, farmer, surveyor,
            economist, entrepreneur, product owner, scrum master, operations manager, veterinary nurse,
            vet nurse, retired"""
        ),
        ignore=words(
            """cron job, cron jobs, ci job, ci jobs, background job, background jobs, batch job, batch jobs,
            job queue, the job done, good job, great job, nice job, job done, noticed, noticing, notice that,
            notice how, notice the, notice any, position of, in a position, position absolute,
            position relative, position fixed, role model, role play, role-play, play a role, plays a role,
            package manager, password manager, context manager, task manager, window manager, file manager,
            state manager, work in progress, fired up, fired off"""
        ),
    ),
    "employer": Lexicon(
        triggers=words(
            """work at, work for, working at, working for, joined, started at, company, works at, employer,
            employed by, employed at, agency, job at, job with, offer from, the firm, my firm, new company"""
        ),
        values=words(
            """law firm, accounting firm, consulting firm, consultancy, startup, start-up, nhs, civil service,
            big four"""
        ),
        ignore=words(
            """joined the call, joined the meeting, joined the chat, joined table, joined tables,
            joined the data, keep me company, keep you company"""
        ),
    ),
    "diet": Lexicon(
        triggers=words(
            """vegan, vegetarian, pescatarian, meat, eat, eating, diet, chicken, fish, dairy, gluten, lactose,
            carbs, cut out, cutting out, gave up meat, stopped eating"""
        ),
        values=words(
            """vegan, vegetarian, veggie, pescatarian, pescetarian, flexitarian, omnivore, carnivore, keto,
            eat anything, eat everything, eat meat,
            paleo, low-carb, low carb, gluten-free, gluten free, dairy-free, dairy free, lactose-free,
            lactose free, lactose intolerant, coeliac, celiac, halal, kosher, plant-based, plant based,
            intermittent fasting, whole30, raw vegan, sugar-free, sugar free, no meat, no dairy"""
        ),
        ignore=words("""eat up, eats up, eating up, cut out for"""),
    ),
    "drink": Lexicon(
        triggers=words(
            """coffee, tea, latte, espresso, matcha, flat white, drink, caffeine, cuppa, cup of, sober,
            teetotal, alcohol"""
        ),
        values=words(
            """coffee, black coffee, white coffee, iced coffee, cold brew, filter coffee, instant coffee,
            decaf, decaf coffee, espresso, double espresso, americano, latte, oat latte, oat milk latte,
            iced latte, flat white, cappuccino, macchiato, cortado, mocha, chai, chai latte, dirty chai, tea,
            green tea, black tea, white tea, herbal tea, mint tea, peppermint tea, chamomile, camomile,
            earl grey, english breakfast, rooibos, oolong, jasmine tea, barley tea, matcha, matcha latte,
            hojicha, genmaicha, sencha, yerba mate, bubble tea, boba, milk tea, hot chocolate, cocoa, juice,
            orange juice, apple juice, smoothie, kombucha, kefir, sparkling water, fizzy water, soda, cola,
            coke, diet coke, coke zero, pepsi, lemonade, energy drink, energy drinks, red bull,
            monster energy, lucozade, beer, lager, ale, ipa, stout, guinness, cider, wine, red wine,
            white wine, rosé, prosecco, champagne, cava, whisky, whiskey, gin, gin and tonic, vodka, rum,
            tequila, soju, mocktail, cocktail, oat milk, almond milk, soy milk, soya milk, milk,
            protein shake, french press, alcohol-free, non-alcoholic, teetotal"""
        ),
        ignore=words("""cup of tea to me, not my cup of tea"""),
    ),
    "car": Lexicon(
        triggers=words(
            """car, drive, driving, my car, vehicle, drove, driven, car lease, leasing, motorbike, motorcycle,
            suv, hatchback, estate car, electric car, ev, hybrid car, test drive, petrol, diesel, mileage"""
        ),
        values=words(
            """toyota, honda, nissan, mazda, subaru, mitsubishi, suzuki, lexus, ford, vauxhall, opel,
            volkswagen, vw, skoda, škoda, seat ibiza, seat leon, seat león, seat arona, seat ateca, cupra,
            audi, bmw, mercedes, mercedes-benz, benz, porsche, mini cooper, renault, peugeot, citroën,
            citroen, dacia, fiat, alfa romeo, lancia, jeep, chevrolet, chevy, chrysler, cadillac, tesla,
            volvo, polestar, saab, land rover, range rover, kia, hyundai, byd, nio, xpeng, mg4, mg zs, geely,
            ferrari, lamborghini, maserati, bentley, rolls-royce, aston martin, mclaren, yaris, corolla,
            prius, auris, aygo, rav4, c-hr, camry, land cruiser, hilux, civic, honda jazz, honda fit, cr-v,
            hr-v, honda accord, qashqai, juke, micra, nissan leaf, nissan note, x-trail, mx-5, cx-5, cx-30,
            mazda3, mazda 3, suzuki swift, vitara, jimny, vw golf, volkswagen golf, golf gti, vw polo,
            volkswagen polo, passat, tiguan, touran, t-roc, t-cross, id.3, id.4, id3, id4, vw beetle, octavia,
            fabia, skoda superb, kodiaq, karoq, kamiq, enyaq, audi a3, audi a4, audi q3, audi q5, audi q7,
            e-tron, 3 series, 1 series, 5 series, bmw x1, bmw x3, bmw x5, bmw i3, c-class, a-class, e-class,
            glc, gla, model 3, model y, tesla model s, tesla model x, clio, captur, megane, mégane, twingo,
            renault zoe, peugeot 208, peugeot 2008, peugeot 308, peugeot 3008, citroën c3, citroen c3,
            berlingo, sandero, dacia duster, fiat 500, fiat panda, fiat punto, corsa, astra, mokka,
            ford fiesta, ford focus, kuga, ford puma, mondeo, mustang, ford transit, picanto, ceed, sportage,
            niro, ev6, sorento, kia rio, i10, i20, i30, hyundai tucson, kona, ioniq, ioniq 5, xc40, xc60,
            xc90, v60, subaru outback, forester, impreza, wrangler, evoque, land rover defender,
            porsche cayenne, macan, byd seal, byd dolphin, atto 3"""
        ),
        ignore=words(
            """hard drive, hard drives, usb drive, flash drive, drive-thru, drive thru, driver, drivers,
            data-driven, test-driven, event-driven, driven by, driving force, driving me crazy"""
        ),
    ),
    "partner": Lexicon(
        triggers=words(
            """boyfriend, girlfriend, partner, husband, wife, fiancé, dating, fiancée, fiance, fiancee,
            spouse, married, engaged, divorc, separated, broke up, breakup, i'm single, im single,
            been single, my ex, relationship, bf, gf, hubby, other half, significant other, seeing someone,
            got together, proposed to me, he proposed, she proposed, wedding"""
        ),
        values=words("""married, engaged, divorced, widowed, widow, widower"""),
        ignore=words(
            """business partner, business partners, partner company, partner organisation, tandem partner,
            language partner, exchange partner, dance partner, study partner, training partner,
            running partner, climbing partner, dating back, dating from, separated by, separated with,
            relationship between, one-to-many relationship, many-to-many relationship"""
        ),
    ),
    "pet": Lexicon(
        triggers=words(
            """dog, cat, puppy, kitten, hamster, rabbit, pet, vet, adopted, rescue dog, rescue cat, aquarium,
            walk the dog, walking the dog"""
        ),
        values=words(
            """dog, dogs, puppy, puppies, doggo, cat, cats, kitten, kittens, kitty, hamster, guinea pig,
            guinea pigs, rabbit, rabbits, bunny, parrot, budgie, cockatiel, tortoise, turtle, gecko, lizard,
            snake, bearded dragon, ferret, goldfish, fish tank, chinchilla, gerbil, rat, rats, horse, pony,
            labrador, golden retriever, retriever, corgi, dachshund, sausage dog, beagle, poodle, cockapoo,
            labradoodle, cavapoo, spaniel, cocker spaniel, springer spaniel, cavalier, border collie, collie,
            husky, german shepherd, french bulldog, frenchie, bulldog, pug, chihuahua, shih tzu, jack russell,
            terrier, staffie, staffy, greyhound, whippet, lurcher, rottweiler, doberman, schnauzer,
            pomeranian, samoyed, shiba, shiba inu, akita, bichon, yorkie, great dane, bernese, sheepdog,
            maine coon, ragdoll, siamese, british shorthair, persian cat, bengal cat, sphynx, tabby, moggy"""
        ),
        ignore=words(
            """pet peeve, pet project, pet projects, rabbit hole, rabbitmq, adopted the, adopted a new"""
        ),
    ),
    "email": Lexicon(
        triggers=words("""email, e-mail, mail, address, inbox, email address, e-mail address"""),
        values=words(
            """gmail, outlook, hotmail, proton mail, protonmail, yahoo mail, icloud mail, fastmail, gmx"""
        ),
    ),
    "phone": Lexicon(
        triggers=words(
            """phone, number, mobile, cell, phone number, mobile number, cell number, landline, sim card,
            new sim, reach me on, call me on, text me on"""
        ),
        ignore=words(
            """number of, numbers, number one, line number, page number, version number, port number,
            house number, order number, reference number, serial number, account number, mobile app,
            mobile apps, mobile-first, mobile first, mobile view, mobile version, mobile layout,
            mobile design, cells"""
        ),
    ),
    "money": Lexicon(
        triggers=words(
            """rent, salary, pay, earn, budget, paid, paying, income, wage, wages, hourly rate, day rate,
            per hour, per month, per year, per annum, pay rise, a raise, got a raise, pay cut, bonus, savings,
            saving up, save up, debt, loan, mortgage, bills, overdraft, credit card, take-home, take home,
            net pay, after tax, before tax, pension, allowance, pocket money, council tax, costs me,
            bank account, investing, invested, investment, afford"""
        ),
        ignore=words("""pay attention, paid attention, paying attention, take home message"""),
    ),
    "appointment": Lexicon(
        triggers=words(
            """appointment, dentist, doctor, meeting, interview, booked, appt, booking, book in, check-up,
            checkup, haircut, vet appointment, physio, therapy session, consultation, mri scan, ultrasound,
            blood test, vaccin, jab, surgery, reschedul, postponed, hospital, clinic, optician, eye test,
            smear test, parents' evening, a viewing, flat viewing, house viewing"""
        ),
    ),
    "study": Lexicon(
        triggers=words(
            """course, degree, master, msc, bootcamp, university, studying, study, studies, studied, uni,
            college, grad school, phd, doctorate, bachelor, bsc, mba, major in, majoring, minor in, thesis,
            dissertation, exam, semester, enrolled, enrol, graduat, diploma, certification, online course,
            apprenticeship, a-levels, a levels, gcse, lectures, tuition, coursework, law school, med school,
            medical school, business school"""
        ),
        values=words(
            """law, law degree, medicine, economics, business administration, business studies, accounting,
            computer science, software engineering, data science, engineering, mechanical engineering,
            civil engineering, electrical engineering, physics, chemistry, biology, biochemistry, maths, math,
            mathematics, statistics, psychology, sociology, philosophy, art history, ancient history,
            history degree, english literature, literature, linguistics, politics, political science,
            international relations, geography, nursing, dentistry, veterinary medicine, graphic design,
            interior design, fashion design, ux design, product design, web design, fine art, journalism,
            media studies, film studies, social work, public health, web development, data analytics,
            nutrition, sports science, criminology, anthropology, archaeology, theology, classics, masters,
            master's, bachelor's, phd, msc, mba, llb, llm, pgce, phd student, student"""
        ),
        ignore=words(
            """of course, in due course, course of action, golf course, main course, on course, off course,
            matter of course, over the course, case study, case studies, the study found, studies show,
            study shows, master branch, master bedroom, mastercard, masterpiece, mastered, mastering, degrees,
            a degree of, to a degree, to some degree, 360 degree, 360-degree"""
        ),
    ),
    "language": Lexicon(
        triggers=words(
            """learning, learn, language, languages, fluent, native speaker, i speak, we speak, duolingo,
            babbel, language exchange, tandem partner, vocab, grammar, conjugat, pronunciation, kanji,
            hiragana, katakana, hsk, jlpt, dele, delf, ielts, toefl"""
        ),
        values=words(
            """english, spanish, french, german, italian, portuguese, brazilian portuguese, dutch, swedish,
            norwegian, danish, finnish, icelandic, czech, slovak, hungarian, romanian, bulgarian, greek,
            russian, ukrainian, serbian, croatian, turkish, arabic, hebrew, persian, farsi, urdu, hindi,
            bengali, punjabi, tamil, japanese, korean, chinese, mandarin, cantonese, vietnamese, thai,
            indonesian, malay, tagalog, filipino, swahili, welsh, irish, gaelic, catalan, basque, galician,
            esperanto, latin, sign language, bsl, asl"""
        ),
        ignore=words(
            """learn to, learning to, learned to, learnt to, learn how, learning how, learned how,
            machine learning, deep learning, reinforcement learning, learning rate, learning curve,
            e-learning, learned that, learnt that, learn more, lessons learned, lesson learned,
            programming language, programming languages, language model, language models, body language,
            natural language, query language, markup language, language server"""
        ),
    ),
    "hobby": Lexicon(
        triggers=words(
            """hobby, climbing, bouldering, class, club, training, hobbies, pastime, took up, taking up,
            free time, spare time, lessons, sport, sports, league, workout, work out, working out, i exercise,
            exercising"""
        ),
        values=words(
            """bouldering, climbing, rock climbing, go running, went running, going running, started running,
            running club, trail running, jogging, marathon, half marathon, parkrun, swimming, cycling,
            mountain biking, spin class, hiking, yoga, hot yoga, pilates, barre, gym, weightlifting,
            weight lifting, powerlifting, crossfit, hiit, boxing, kickboxing, martial arts, karate, judo,
            taekwondo, jiu-jitsu, jiu jitsu, bjj, muay thai, fencing, archery, rowing, kayaking, canoeing,
            paddleboarding, paddle boarding, surfing, sailing, scuba diving, free diving, freediving, skiing,
            snowboarding, ice skating, skateboarding, football, soccer, five-a-side, rugby, cricket,
            basketball, volleyball, netball, hockey, tennis, padel, playing squash, badminton, table tennis,
            ping pong, golf, bowling, darts, snooker, chess, board games, video games, gaming, pottery,
            ceramics, knitting, crochet, sewing, embroidery, quilting, painting, watercolour, watercolor,
            drawing, sketching, calligraphy, photography, film photography, woodworking, gardening, baking,
            cooking class, birdwatching, fishing, angling, book club, journaling, guitar, bass guitar, piano,
            violin, cello, drums, ukulele, saxophone, flute, singing, choir, dancing, salsa, bachata, tango,
            ballet, swing dance, lindy hop, latin dance, contemporary dance, pole dancing, zumba, improv,
            theatre, theater, acting classes, amateur dramatics, stand-up comedy, volunteering, meditation,
            tai chi, origami, lego, jigsaw, podcasting, djing, astronomy, camping, triathlon, orienteering,
            geocaching, roller derby, ultimate frisbee, wild swimming, open water swimming, calisthenics,
            parkour, dungeons & dragons, d&d, dnd, warhammer"""
        ),
        ignore=words(
            """world class, world-class, middle class, working class, css class, class name, base class,
            python class, class method, class component, training data, training set, model training,
            training loop, training run, business class, first class, economy class, work out how,
            work out what, work out the, work out if, work out why, work out whether, took up space,
            taking up space, lessons learned"""
        ),
    ),
    "favourite": Lexicon(
        triggers=words("""favourite, favorite, colour, color, fave, fav, favs, faves, my go-to"""),
        values=words(
            """navy, navy blue, blue, royal blue, baby blue, dark blue, light blue, teal, turquoise, green,
            dark green, forest green, bottle green, olive green, mint green, sage green, lime green, emerald,
            red, burgundy, maroon, crimson, scarlet, cherry red, wine red, orange, yellow, mustard yellow,
            pink, hot pink, purple, violet, lavender, lilac, black, white, grey, gray, brown, beige,
            terracotta, ochre, charcoal, ivory, magenta, indigo, aubergine"""
        ),
        ignore=words(
            """color:, colour:, background-color, background color, color scheme, colour scheme, font color,
            text color, hex color, color code, colour code"""
        ),
    ),
    "tool": Lexicon(
        triggers=words(
            """editor, ide, vim, vs code, vscode, emacs, switched to, i'm using, im using, i am using,
            been using, started using, now using, stopped using, i use, software, note-taking, notes app,
            to-do app, todo app, browser, operating system, spreadsheet, text editor, code editor, app for"""
        ),
        values=words(
            """notion, obsidian, evernote, onenote, apple notes, google keep, roam research, logseq, todoist,
            things 3, ticktick, trello, asana, jira, clickup, airtable, excel, google sheets, apple numbers,
            libreoffice, microsoft word, ms word, google docs, apple pages, powerpoint, google slides, canva,
            figma, photoshop, lightroom, gimp, vs code, vscode, visual studio, vim, neovim, nvim, emacs,
            pycharm, intellij, webstorm, sublime text, xcode, android studio, jupyter, chatgpt, copilot,
            windows, windows 10, windows 11, macos, mac os, linux, ubuntu, fedora, arch linux, debian,
            chromeos, iphone, android, google pixel, pixel 7, pixel 8, pixel 9, my pixel, samsung,
            samsung galaxy, ipad, macbook, thinkpad, chromebook, kindle, chrome, firefox, google drive,
            dropbox, onedrive, icloud, spotify, apple music, youtube music, deezer, soundcloud, strava,
            garmin, fitbit, apple watch, myfitnesspal, duolingo, babbel, anki, memrise, busuu, slack,
            ms teams, microsoft teams, whatsapp, telegram, discord, wechat, password manager, 1password,
            bitwarden, lastpass, google calendar, davinci resolve, final cut pro, premiere pro"""
        ),
    ),
    "trip": Lexicon(
        triggers=words(
            """trip, holiday, vacation, travel, going to, flight, holidays, flying to, fly to, trip to,
            road trip, city break, getaway, honeymoon, backpacking, cruise, itinerary, hotel, airbnb, hostel,
            tickets to, abroad, overseas, weekend in, week in, staycation, half-term, interrail, layover,
            passport"""
        ),
        ignore=words(
            """going to be, going to have, going to do, going to make, going to try, going to get,
            going to start, going to need, going to take, going to go, going to see, going to say,
            going to use, going to ask, going to write, going to call, going to keep, going to put,
            going to give, going to work, going to buy, going to sell, going to quit, going to learn,
            going to move, going to stay, going to miss, going to stop, going to bed, going to sleep,
            going to the gym, going to the office, going to school, going to the doctor, going to the dentist,
            going to the shop, going to the shops"""
        ),
    ),
}
